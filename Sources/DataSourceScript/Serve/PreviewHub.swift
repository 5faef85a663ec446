import Foundation
import Synchronization

/// What a served view's pages read: the page and the JSON of the view now, and the messages that
/// took it there, for pages that connect or fall behind.
///
/// The session publishes into it after each statement that changes the view; the web server
/// reads it from its own tasks. Nothing here waits for the session, which may be blocked reading
/// its next line.
public final class PreviewHub: Sendable {
  /// One state of the view: its number, the page `show X as html` draws, and `show X as json`.
  public struct Screen: Sendable {
    /// Counts the states published since serving began (0: the first page).
    public let version: Int
    /// The page, without the live script.
    public let html: String
    /// What `show X as json` prints.
    public let json: String
  }

  private struct Kept {
    var version: Int
    var message: String
    var html: String
  }

  private struct State {
    var current: Screen
    /// The last ``keptVersions`` states, oldest first, with the message that led to each.
    var history: [Kept] = []
    /// The bytes of the pages in `history`.
    var historyBytes = 0
    var subscribers: [Int: AsyncStream<String>.Continuation] = [:]
    var nextSubscriber = 0
  }

  /// How many past states a page may still fetch to animate a batch; one further behind
  /// redraws from the current page.
  static let keptVersions = 512
  /// How many bytes of past pages are kept at most: a page of a large table is megabytes, and
  /// every edit makes one (the last two states are kept whatever their size).
  static let keptBytes = 32 << 20
  /// How many messages wait for one page's socket at most; a page that falls further behind
  /// (it stopped reading) is closed, and draws itself again whole when it connects again.
  static let waitingMessages = 10_000

  private let state: Mutex<State>

  /// Which serving this is: a page drawn by another (a server stopped and started again on the
  /// same port, or another view there) counts its states apart, so it is drawn again whole.
  public let id = String(UInt64.random(in: 0...UInt64.max), radix: 36)

  /// The secret every request must carry (`?token=…`, in the address dsh prints): 128 random
  /// bits, so that only who was shown the address reads the view.
  public let token = (0..<2).map { _ in
    let part = String(UInt64.random(in: 0...UInt64.max), radix: 16)
    return String(repeating: "0", count: 16 - part.count) + part
  }.joined()

  init(html: String, json: String) {
    state = Mutex(State(current: Screen(version: 0, html: html, json: json)))
  }

  /// The view now.
  public var current: Screen { state.withLock { $0.current } }

  /// The page of an earlier state, while it is kept.
  public func html(at version: Int) -> String? {
    state.withLock { state in
      if version == state.current.version { return state.current.html }
      return state.history.last { $0.version == version }?.html
    }
  }

  /// A layout message: the page redraws whole from the current page (the view was bound again,
  /// or a setting changed how it is drawn).
  static func layoutMessage(version: Int) -> String { "{\"kind\": \"layout\", \"version\": \(version)}" }

  /// A new state of the view, and the message that tells pages how to get there.
  func publish(message: String, html: String, json: String) {
    state.withLock { state in
      let version = state.current.version + 1
      state.current = Screen(version: version, html: html, json: json)
      state.history.append(Kept(version: version, message: message, html: html))
      state.historyBytes += html.utf8.count
      var dropped = 0
      while state.history.count - dropped > 2,
        state.history.count - dropped > Self.keptVersions || state.historyBytes > Self.keptBytes
      {
        state.historyBytes -= state.history[dropped].html.utf8.count
        dropped += 1
      }
      if dropped > 0 { state.history.removeFirst(dropped) }
      for (id, continuation) in state.subscribers {
        if case .dropped = continuation.yield(message) {
          state.subscribers[id] = nil
          continuation.finish()
        }
      }
    }
  }

  /// The messages after `version` of the serving `hub`, then each new one as it is published; a
  /// page of another serving, ahead of this one, or too far behind gets a layout message instead.
  public func subscribe(after version: Int, of hub: String) -> (id: Int, messages: AsyncStream<String>) {
    let (stream, continuation) = AsyncStream.makeStream(
      of: String.self, bufferingPolicy: .bufferingOldest(Self.waitingMessages))
    let id = state.withLock { state in
      let missed = state.history.filter { $0.version > version }
      if hub != self.id || version > state.current.version {
        continuation.yield(Self.layoutMessage(version: state.current.version))
      } else if version < state.current.version, missed.first?.version != version + 1 {
        continuation.yield(Self.layoutMessage(version: state.current.version))
      } else {
        for kept in missed { continuation.yield(kept.message) }
      }
      let id = state.nextSubscriber
      state.nextSubscriber += 1
      state.subscribers[id] = continuation
      return id
    }
    return (id, stream)
  }

  /// A page went away.
  public func unsubscribe(_ id: Int) {
    state.withLock { $0.subscribers.removeValue(forKey: id) }?.finish()
  }

  /// Serving stopped: every page is told so, and its socket closes.
  func close() {
    let all = state.withLock { state in
      defer { state.subscribers = [:] }
      return Array(state.subscribers.values)
    }
    for continuation in all {
      continuation.yield(Self.stoppedMessage)
      continuation.finish()
    }
  }

  /// The last message a page gets: serving stopped, and the page says so rather than show a
  /// stale state as live.
  static let stoppedMessage = "{\"kind\": \"stopped\"}"
}

/// Starts the web server of a served view; the dsh binary gives the session one.
public protocol PreviewServerStarting: Sendable {
  /// Listens on `host`:`port` (0: any free port) and serves `hub`'s view.
  /// - Throws: an error whose description says why (a port in use names it).
  func start(hub: PreviewHub, name: String, host: String, port: Int) async throws -> any PreviewServing
}

/// A running web server of a served view.
public protocol PreviewServing: Sendable {
  /// The port it listens on.
  var port: Int { get }
  /// Stops listening and closes every page's socket.
  func stop() async
}
