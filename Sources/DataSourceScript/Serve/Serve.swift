import DataSourceKit
import DataSourceKitRendering
import DataSourceKitValues
import Foundation

/// A view served to browser pages: its own baseline of changes (apart from the session's
/// `changes` and `watch`, which it must not consume), the hub its pages read, and the server.
@MainActor
final class ServedView {
  let hub: PreviewHub
  let tracker = ChangeTracker()
  let server: any PreviewServing
  /// The look of the page before a `set` statement (``Serving/frame(of:named:)``): when
  /// the setting changed it, the pages draw themselves again.
  var frameBeforeSetting: String?

  init(hub: PreviewHub, server: any PreviewServing) {
    self.hub = hub
    self.server = server
  }
}

/// What `serve` keeps for a session: the views served and their servers, and the statement
/// whose changes the pages are told of when it is done.
///
/// The session calls it around each statement (``noteFramesBeforeSetting()``,
/// ``prepare(for:changing:)``, ``publish(after:changing:)``); a page's request comes through the
/// served view's hub to ``answer(_:to:for:)``, on the main actor.
@MainActor
final class Serving {
  unowned let session: Session
  /// The views served, by name.
  var views: [String: ServedView] = [:]
  /// A statement whose changes the served pages are told of once it is done; the changed
  /// sources, when known (`nil` inside: every source may have changed).
  var pendingPublish: (statement: Statement, changing: Set<ObjectIdentifier>??)?

  init(session: Session) {
    self.session = session
  }

  /// `serve X [on ADDRESS]`, `serve X off`, `serve off`.
  func serve(_ name: Identifier?, address: ServeAddress?, on: Bool, range: SourceRange) async throws {
    guard on else {
      let names = name.map { [$0.name] } ?? views.keys.sorted()
      if let name, views[name.name] == nil {
        throw Diagnostic(
          .serveFailed("\(name.name) is not being served (serve \(name.name) starts it)"), at: name.range)
      }
      for served in names {
        await stop(served)
        session.output.write("stopped serving \(served)\n")
      }
      if names.isEmpty { session.output.write("nothing is being served\n") }
      return
    }
    guard let name else { return }
    let host = address?.host ?? "127.0.0.1"
    let port = address?.port ?? Serving.defaultPort
    // A server listens on an address of this machine, written as one: a host name would be
    // looked up, and may not be this machine's.
    if host != "localhost", !Serving.isAddressLiteral(host) {
      throw Diagnostic(
        .serveFailed(
          "'\(host)' is not an address: serve \(name.name) listens on 127.0.0.1 (the default), or on \"0.0.0.0:\(port)\" to be reached from other machines"
        ), at: address?.range ?? range)
    }
    let beyondThisMachine = !["127.0.0.1", "localhost", "::1"].contains(host)
    if beyondThisMachine, session.environment.sandbox != nil {
      throw Diagnostic(
        .serveFailed("--safe serves on 127.0.0.1 only: serve \(name.name) on \(port)"),
        at: address?.range ?? range)
    }
    let binding = try session.bindings.binding(named: name)
    guard case .table = binding.value else {
      if case .provider = binding.value {
        throw Diagnostic(
          .serveFailed(
            "serve draws a table's cells, and a provider has none: let v = table \(name.name) with cell basic \"{…}\", then serve v"
          ), at: name.range)
      }
      // A value, a cell or a function: nothing with rows to serve.
      throw Diagnostic(
        .serveFailed(
          "serve draws a table, and \(name.name) is \(binding.value.kindDescription): show \(name.name) prints it; serve a table (let v = table … with cell …, then serve v)"
        ), at: name.range)
    }
    guard let starter = session.previewServers else {
      throw Diagnostic(
        .serveFailed("serving needs the dsh program (this session has no web server)"), at: range)
    }
    // Drawn once before the server starts: a view that cannot be drawn is not served.
    _ = try window(of: binding.value, named: name.name, .rows(0..<1), counts: false, at: name.range)
    // Served already: on the same port the old server gives way first (the port is its); on
    // another, the new one starts first, so a failure leaves the old one serving.
    let previous = views[name.name]
    if let previous, previous.server.port == port { await stop(name.name) }
    let hub = PreviewHub { [weak self] request, hub in
      self?.answer(request, to: hub, for: name.name)
        ?? PageAnswer(status: 410, type: "text/plain", version: nil, body: "dsh has ended\n")
    }
    let server: any PreviewServing
    do {
      server = try await starter.start(hub: hub, name: name.name, host: host, port: port)
    } catch {
      let still =
        views[name.name].map { "; \(name.name) is still served on port \($0.server.port)" } ?? ""
      throw Diagnostic(
        .serveFailed("cannot serve \(name.name) on \(host):\(port): \(error)\(still)"),
        at: address?.range ?? range)
    }
    if let previous, views[name.name] === previous {
      await stop(name.name)
      session.output.write("stopped serving \(name.name) on port \(previous.server.port)\n")
    }
    let served = ServedView(hub: hub, server: server)
    _ = try served.tracker.watch(name.name, value: binding.value)
    views[name.name] = served
    // What the pages show is the view now: `changes` starts from it too.
    session.changes.shown(name.name)
    if beyondThisMachine {
      session.output.writeError(
        "warning: \(name.name) is served on \(host):\(server.port): anyone who can reach this machine can read it\n"
      )
    }
    // The token is the key to the view: only who sees this line can open the page.
    if host == "0.0.0.0" || host == "::" {
      session.output.write(
        "serving \(name.name) on every address of this machine, port \(server.port) (here: http://127.0.0.1:\(server.port)/?token=\(hub.token))\n"
      )
    } else {
      let shownHost = host.contains(":") ? "[\(host)]" : host
      session.output.write("serving \(name.name) at http://\(shownHost):\(server.port)/?token=\(hub.token)\n")
    }
  }

  /// Whether `host` is an IPv4 or IPv6 address written out.
  nonisolated static func isAddressLiteral(_ host: String) -> Bool {
    var v4 = in_addr()
    var v6 = in6_addr()
    return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
  }

  /// The most rows a view may have for its page to draw them all; a longer one draws the
  /// rows in view, a window at a time.
  nonisolated static let wholeRows = 1_000

  /// The rows the page of a long view draws before its script measures the screen.
  static let firstRows = 120

  /// The port `serve X` listens on when none is given (Python's `http.server`'s).
  static let defaultPort = 8000

  /// Stops serving a view: its server closes, its pages' sockets close.
  func stop(_ name: String) async {
    guard let served = views.removeValue(forKey: name) else { return }
    served.hub.close()
    await served.server.stop()
  }

  /// Stops every served view (dsh is leaving).
  func stopAll() async {
    for name in views.keys.sorted() { await stop(name) }
  }

  /// Whether any view is being served.
  var isServing: Bool { !views.isEmpty }

  /// The answer to what a page of the view served as `name` by `hub` asks, drawn now.
  func answer(_ request: PageRequest, to hub: PreviewHub, for name: String) -> PageAnswer {
    guard let served = views[name], served.hub === hub, let binding = session.bindings[name] else {
      return PageAnswer(
        status: 410, type: "text/plain", version: nil, body: "\(name) is no longer served here\n")
    }
    let version = hub.version
    let range: SourceRange = 0..<0
    do {
      switch request {
      case .json:
        let json = try rendered(binding.value, named: name, mode: .json, at: range)
        return PageAnswer(status: 200, type: "application/json", version: version, body: json)
      case .page:
        let window = try window(
          of: binding.value, named: name, .rows(0..<Serving.firstRows), counts: true, at: range)
        let page = PreviewPage.page(window, version: version, serving: hub.id, token: hub.token)
        return PageAnswer(status: 200, type: "text/html", version: version, body: page)
      case .window(let rows, let counts):
        let window = try window(of: binding.value, named: name, rows, counts: counts, at: range)
        return PageAnswer(
          status: 200, type: "application/json", version: version, body: window.json(version: version))
      }
    } catch let diagnostic as Diagnostic {
      return PageAnswer(
        status: 500, type: "text/plain", version: version, body: diagnostic.message.text + "\n")
    } catch {
      return PageAnswer(status: 500, type: "text/plain", version: version, body: "\(error)\n")
    }
  }

  /// The rows of a window of a served view, drawn as the page's parts: every row when the view
  /// has at most ``wholeRows``.
  /// - Complexity: O(log sections + rows drawn), and O(sections) with the counts.
  func window(
    of value: ScriptValue, named name: String, _ window: PageRequest.Window, counts: Bool,
    at range: SourceRange
  ) throws -> ServedWindow {
    let (view, _, _) = try session.shownView(of: value, named: name, expressionRange: range)
    let source = view.dataSource
    let offsets = view.sectionOffsets
    let total = offsets.total
    var rows: Range<Int>
    switch window {
    case .rows(let asked):
      rows = asked.clamped(to: 0..<total)
    case .around(let section, let row, let before, let after):
      var flat = total
      if section < offsets.sectionCount {
        let (start, end) = (offsets.starts[section], offsets.starts[section + 1])
        flat = start + min(row, end - start)
      }
      rows = max(0, flat - before)..<min(total, flat + after)
    }
    if total <= Serving.wholeRows { rows = 0..<total }
    let stateBefore = source.loadState
    let snapshot = view.layout(windows: [rows])
    if source.loadState == .error, stateBefore != .error {
      throw Diagnostic(
        .dataSource(source.loadError ?? .sourceFailed(message: "the source failed while it was read")),
        at: range)
    }
    let page = session.settings.page(style: Session.preferredStyle(of: source), title: name)
    return ServedWindow(
      parts: Renderer.renderHTMLParts(snapshot, options: page), rows: rows, total: total,
      counts: counts ? (0..<offsets.sectionCount).map { offsets.starts[$0 + 1] - offsets.starts[$0] } : nil)
  }

  /// How a served view's page looks, but for the rows past its first few: a setting that changes
  /// it makes the pages draw themselves again.
  func frame(of value: ScriptValue, named name: String) -> String? {
    let range: SourceRange = 0..<0
    guard let window = try? window(of: value, named: name, .rows(0..<50), counts: false, at: range)
    else {
      return nil
    }
    let parts = window.parts
    return parts.head + parts.top + parts.table + parts.bottom
  }

  private func rendered(_ value: ScriptValue, named name: String, mode: RenderMode, at range: SourceRange)
    throws
    -> String
  {
    let (view, showsFields, columnSource) = try session.shownView(
      of: value, named: name, expressionRange: range)
    let source = view.dataSource
    let options = RenderOptions(
      mode: mode, width: session.settings.effectiveWidth(session.environment), color: false,
      showsFields: showsFields,
      toTerminal: false, page: session.settings.page(style: Session.preferredStyle(of: source), title: name))
    var text = ""
    try Session.draw(
      view, showsFields: showsFields, columnSource: columnSource, windows: [0..<view.totalRows],
      options: options,
      to: { text += $0 },
      failure: {
        Diagnostic(
          .dataSource(source.loadError ?? .sourceFailed(message: "the source failed")), at: range)
      })
    return text
  }

  /// Before a setting: how each served page looks, to see whether the setting changed it.
  func noteFramesBeforeSetting() {
    for (name, served) in views {
      served.frameBeforeSetting = session.bindings[name].flatMap { frame(of: $0.value, named: name) }
    }
  }

  /// Before a statement that changes data wholesale: served views keep what they showed, as
  /// ``ChangeTracker/copySnapshotBaselines(_:changing:)`` says.
  func prepare(for statement: Statement, changing: Set<ObjectIdentifier>?) throws {
    guard !views.isEmpty else { return }
    if case .edit = statement { return }
    for served in views.values {
      try served.tracker.copySnapshotBaselines(session.bindings, changing: changing)
    }
  }

  /// After a statement: each served view it changed tells its pages, with the batch `changes X as
  /// json` prints, or a layout message when X was bound again or a setting redrew it.
  func publish(after statement: Statement, changing: Set<ObjectIdentifier>??) {
    guard !views.isEmpty else { return }
    for name in views.keys.sorted() {
      guard let served = views[name], let binding = session.bindings[name] else { continue }
      do {
        var message: String?
        switch statement {
        case .binding(let bound, _, _) where bound.name == name:
          guard case .table = binding.value else {
            // No page to draw: the pages keep the last one, and say so no more.
            views[name] = nil
            served.hub.close()
            Task { await served.server.stop() }
            session.output.writeError(
              "note: \(name) is now \(binding.value.kindDescription), which has no page: stopped serving it (serve \(name) again once it is a table)\n"
            )
            continue
          }
          try served.tracker.rebound(name, to: binding.value)
          message = PreviewHub.layoutMessage(version: served.hub.version + 1)
        case .set:
          // A setting may change how the page is drawn (appearance, device, style): redrawn whole
          // when the page differs.
          if frame(of: binding.value, named: name) != served.frameBeforeSetting {
            message = PreviewHub.layoutMessage(version: served.hub.version + 1)
          }
          served.frameBeforeSetting = nil
        default:
          guard let changing, ChangeTracker.depends(binding.value, on: changing) else { continue }
          guard let changeset = try served.tracker.takeChanges(of: name, value: binding.value),
            !changeset.update.isEmpty
          else { continue }
          message = Session.json(changeset.update)
        }
        guard let message else { continue }
        served.hub.publish(message: message)
      } catch let diagnostic as Diagnostic {
        session.sayError("error: serving \(name): \(diagnostic.message.text)\n")
      } catch {
        session.sayError("error: serving \(name): \(error)\n")
      }
    }
  }
}

/// A window of a served view's rows, as the page's parts, and where it stands.
struct ServedWindow {
  var parts: HTMLParts
  /// The rows drawn (flat positions).
  var rows: Range<Int>
  /// The rows of the view.
  var total: Int
  /// The rows of each section, when asked for.
  var counts: [Int]?

  /// The `/window` answer.
  func json(version: Int) -> String {
    var text = "{\"version\": \(version), \"from\": \(rows.lowerBound), \"to\": \(rows.upperBound), "
    text += "\"total\": \(total), \"top\": \(JSONWriter.quoted(parts.top)), "
    text += "\"table\": \(JSONWriter.quoted(parts.table)), \"bottom\": \(JSONWriter.quoted(parts.bottom))"
    if let counts { text += ", \"counts\": [" + counts.map(String.init).joined(separator: ",") + "]" }
    return text + "}"
  }
}
