import Foundation
import Synchronization

/// What a served view's pages read: the number of the view's state, the messages that took it
/// there (for pages that connect or fall behind), and the session's answers to what a page asks
/// of the view now (the page, a window of rows, the JSON).
///
/// The session publishes into it after each statement that changes the view; the web server
/// reads it from its own threads. The messages never wait for the session; an answer is drawn by
/// the session when it is idle (``IdleWork``), as a table view asks its data source for the
/// cells it shows, so an edit costs the change and a scroll the rows it brings into view.
public final class PreviewHub: Sendable {
  private struct Kept {
    var version: Int
    var message: String
  }

  private struct State {
    /// Counts the states published since serving began (0: the first page).
    var version = 0
    /// The last ``keptVersions`` messages, oldest first.
    var history: [Kept] = []
    var subscribers: [Int: AsyncStream<String>.Continuation] = [:]
    var nextSubscriber = 0
  }

  /// How many past messages a page that connects again may still take; one further behind
  /// draws itself again from the view now.
  static let keptVersions = 512
  /// How many messages wait for one page's socket at most; a page that falls further behind
  /// (it stopped reading) is closed, and draws itself again whole when it connects again.
  static let waitingMessages = 10_000
  /// How long a request waits for the session to draw its answer (a statement may be running)
  /// before it is told to try again.
  static let answerTime: Duration = .seconds(60)

  private let state = Mutex(State())
  /// Draws what a page asks for; the session's, on the main actor.
  private let answering: @MainActor @Sendable (PageRequest, PreviewHub) -> PageAnswer

  /// Which serving this is: a page drawn by another (a server stopped and started again on the
  /// same port, or another view there) counts its states apart, so it is drawn again whole.
  public let id = String(UInt64.random(in: 0...UInt64.max), radix: 36)

  /// The secret every request must carry (`?token=…`, in the address dsh prints): 128 random
  /// bits, so that only who was shown the address reads the view.
  public let token = (0..<2).map { _ in
    let part = String(UInt64.random(in: 0...UInt64.max), radix: 16)
    return String(repeating: "0", count: 16 - part.count) + part
  }.joined()

  init(answering: @escaping @MainActor @Sendable (PageRequest, PreviewHub) -> PageAnswer) {
    self.answering = answering
  }

  /// The number of the view's state now.
  public var version: Int { state.withLock { $0.version } }

  /// The session's answer to `request`, drawn when it is next idle; a 503 when it stays busy
  /// longer than ``answerTime``.
  public func answer(_ request: PageRequest) -> PageAnswer {
    let box = Mutex<PageAnswer?>(nil)
    let done = DispatchSemaphore(value: 0)
    let answering = self.answering
    IdleWork.shared.submit {
      box.withLock { $0 = answering(request, self) }
      done.signal()
    }
    let seconds = Double(Self.answerTime.components.seconds)
    if done.wait(timeout: .now() + seconds) == .timedOut {
      return PageAnswer(
        status: 503, type: "text/plain", version: nil,
        body: "dsh is busy with a statement; the page asks again when it is done\n")
    }
    return box.withLock { $0 }
      ?? PageAnswer(status: 500, type: "text/plain", version: nil, body: "no answer\n")
  }

  /// A layout message: the page redraws whole from the current page (the view was bound again,
  /// or a setting changed how it is drawn).
  static func layoutMessage(version: Int) -> String { "{\"kind\": \"layout\", \"version\": \(version)}" }

  /// A new state of the view, and the message that tells pages how to get there.
  func publish(message: String) {
    state.withLock { state in
      state.version += 1
      state.history.append(Kept(version: state.version, message: message))
      if state.history.count > Self.keptVersions {
        state.history.removeFirst(state.history.count - Self.keptVersions)
      }
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
      if hub != self.id || version > state.version {
        continuation.yield(Self.layoutMessage(version: state.version))
      } else if version < state.version, missed.first?.version != version + 1 {
        continuation.yield(Self.layoutMessage(version: state.version))
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

/// What a page asks of the session.
public enum PageRequest: Sendable {
  /// `GET /`: the page, with the first rows drawn.
  case page
  /// `GET /window`: rows `from..<to` (flat positions), or the rows around row `row` of section
  /// `section` (after a batch, the row the page keeps in place); with the sections' row counts
  /// when `counts`.
  case window(Window, counts: Bool)
  /// `GET /view.json`: what `show X as json` prints.
  case json

  /// Which rows a window holds.
  public enum Window: Sendable {
    case rows(Range<Int>)
    case around(section: Int, row: Int, before: Int, after: Int)
  }
}

/// The session's answer to a ``PageRequest``: an HTTP status, the body and its type, and the
/// number of the state it shows.
public struct PageAnswer: Sendable {
  public var status: Int
  public var type: String
  public var version: Int?
  public var body: String
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
