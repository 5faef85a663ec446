import DataSourceKit
import DataSourceKitValues
import Foundation

/// A view served to browser pages: its own baseline of changes (apart from the session's
/// `changes` and `watch`, which it must not consume), the hub its pages read, and the server.
@MainActor
final class ServedView {
  let hub: PreviewHub
  let tracker = ChangeTracker()
  let server: any PreviewServing

  init(hub: PreviewHub, server: any PreviewServing) {
    self.hub = hub
    self.server = server
  }
}

extension Session {
  /// `serve X [on ADDRESS]`, `serve X off`, `serve off`.
  func serve(_ name: Identifier?, address: ServeAddress?, on: Bool, range: SourceRange) async throws {
    guard on else {
      let names = name.map { [$0.name] } ?? servedViews.keys.sorted()
      if let name, servedViews[name.name] == nil {
        throw Diagnostic(
          .serveFailed("\(name.name) is not being served (serve \(name.name) starts it)"), at: name.range)
      }
      for served in names {
        await stopServing(served)
        output.write("stopped serving \(served)\n")
      }
      if names.isEmpty { output.write("nothing is being served\n") }
      return
    }
    guard let name else { return }
    let host = address?.host ?? "127.0.0.1"
    let port = address?.port ?? Session.defaultServePort
    // A server listens on an address of this machine, written as one: a host name would be
    // looked up, and may not be this machine's.
    if host != "localhost", !Session.isAddressLiteral(host) {
      throw Diagnostic(
        .serveFailed(
          "'\(host)' is not an address: serve \(name.name) listens on 127.0.0.1 (the default), or on \"0.0.0.0:\(port)\" to be reached from other machines"
        ), at: address?.range ?? range)
    }
    let beyondThisMachine = !["127.0.0.1", "localhost", "::1"].contains(host)
    if beyondThisMachine, environment.sandbox != nil {
      throw Diagnostic(
        .serveFailed("--safe serves on 127.0.0.1 only: serve \(name.name) on \(port)"),
        at: address?.range ?? range)
    }
    let binding = try bindings.binding(named: name)
    guard case .table = binding.value else {
      if case .provider = binding.value {
        throw Diagnostic(
          .serveFailed(
            "serve draws a table's cells, and a provider has none: let v = table \(name.name) with cell basic \"{…}\", then serve v"
          ), at: name.range)
      }
      throw Diagnostic(.expectedKind(.showable, found: binding.value.kindDescription), at: name.range)
    }
    guard let starter = previewServers else {
      throw Diagnostic(
        .serveFailed("serving needs the dsh program (this session has no web server)"), at: range)
    }
    let (html, json) = try screen(of: binding.value, named: name.name, at: name.range)
    // Served already: on the same port the old server gives way first (the port is its); on
    // another, the new one starts first, so a failure leaves the old one serving.
    let previous = servedViews[name.name]
    if let previous, previous.server.port == port { await stopServing(name.name) }
    let hub = PreviewHub(html: html, json: json)
    let server: any PreviewServing
    do {
      server = try await starter.start(hub: hub, name: name.name, host: host, port: port)
    } catch {
      let still =
        servedViews[name.name].map { "; \(name.name) is still served on port \($0.server.port)" } ?? ""
      throw Diagnostic(
        .serveFailed("cannot serve \(name.name) on \(host):\(port): \(error)\(still)"),
        at: address?.range ?? range)
    }
    if let previous, servedViews[name.name] === previous {
      await stopServing(name.name)
      output.write("stopped serving \(name.name) on port \(previous.server.port)\n")
    }
    let served = ServedView(hub: hub, server: server)
    _ = try served.tracker.watch(name.name, value: binding.value)
    servedViews[name.name] = served
    // What the pages show is the view now: `changes` starts from it too.
    changes.shown(name.name)
    if beyondThisMachine {
      output.writeError(
        "warning: \(name.name) is served on \(host):\(server.port): anyone who can reach this machine can read it\n"
      )
    }
    // The token is the key to the view: only who sees this line can open the page.
    if host == "0.0.0.0" || host == "::" {
      output.write(
        "serving \(name.name) on every address of this machine, port \(server.port) (here: http://127.0.0.1:\(server.port)/?token=\(hub.token))\n"
      )
    } else {
      let shownHost = host.contains(":") ? "[\(host)]" : host
      output.write("serving \(name.name) at http://\(shownHost):\(server.port)/?token=\(hub.token)\n")
    }
  }

  /// Whether `host` is an IPv4 or IPv6 address written out.
  nonisolated static func isAddressLiteral(_ host: String) -> Bool {
    var v4 = in_addr()
    var v6 = in6_addr()
    return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
  }

  /// The most rows a served page draws (each is a cell of the page).
  static let maximumServedRows = 1_000_000

  /// The port `serve X` listens on when none is given (Python's `http.server`'s).
  static let defaultServePort = 8000

  /// Stops serving a view: its server closes, its pages' sockets close.
  func stopServing(_ name: String) async {
    guard let served = servedViews.removeValue(forKey: name) else { return }
    served.hub.close()
    await served.server.stop()
  }

  /// Stops every served view (dsh is leaving).
  public func stopServingAll() async {
    for name in servedViews.keys.sorted() { await stopServing(name) }
  }

  /// Whether any view is being served.
  public var isServing: Bool { !servedViews.isEmpty }

  /// What a served view's pages get: the page `show X as html` draws, every row of it (a page
  /// scrolls; it has no terminal to fit), and `show X as json`.
  func screen(of value: ScriptValue, named name: String, at range: SourceRange) throws -> (
    html: String, json: String
  ) {
    (
      try rendered(value, named: name, mode: .html, at: range),
      try rendered(value, named: name, mode: .json, at: range)
    )
  }

  private func rendered(_ value: ScriptValue, named name: String, mode: RenderMode, at range: SourceRange)
    throws
    -> String
  {
    let (view, showsFields, columnSource) = try shownView(of: value, named: name, expressionRange: range)
    // A page holds every row: a view too large for one is refused before it is drawn (a range
    // of a billion would be gigabytes of page).
    if view.totalRows > Session.maximumServedRows {
      throw Diagnostic(
        .serveFailed(
          "\(name) has \(view.totalRows) rows, and a served page draws every row, at most \(Session.maximumServedRows): serve a part (let v = table … | limit N)"
        ), at: range)
    }
    let source = view.dataSource
    let options = RenderOptions(
      mode: mode, width: settings.effectiveWidth(environment), color: false, showsFields: showsFields,
      toTerminal: false, page: settings.page(style: Session.preferredStyle(of: source), title: name))
    var text = ""
    try Session.draw(
      view, showsFields: showsFields, columnSource: columnSource, windows: [0..<view.totalRows],
      options: options,
      to: { text += $0 },
      failure: {
        Diagnostic(
          .dataSource(.sourceFailed(message: source.errorDescription ?? "the source failed")), at: range)
      })
    return text
  }

  /// Before a statement that changes data wholesale: served views keep what they showed, as
  /// ``ChangeTracker/copySnapshotBaselines(_:changing:)`` says.
  func prepareServedViews(for statement: Statement, changing: Set<ObjectIdentifier>?) throws {
    guard !servedViews.isEmpty else { return }
    if case .edit = statement { return }
    for served in servedViews.values {
      try served.tracker.copySnapshotBaselines(bindings, changing: changing)
    }
  }

  /// After a statement: each served view it changed tells its pages, with the batch `changes X as
  /// json` prints, or a layout message when X was bound again or a setting redrew it.
  func publishServedViews(after statement: Statement, changing: Set<ObjectIdentifier>??) {
    guard !servedViews.isEmpty else { return }
    for name in servedViews.keys.sorted() {
      guard let served = servedViews[name], let binding = bindings[name] else { continue }
      do {
        var message: String?
        switch statement {
        case .binding(let bound, _, _) where bound.name == name:
          guard case .table = binding.value else {
            // No page to draw: the pages keep the last one, and say so no more.
            servedViews[name] = nil
            served.hub.close()
            Task { await served.server.stop() }
            output.writeError(
              "note: \(name) is now \(binding.value.kindDescription), which has no page: stopped serving it (serve \(name) again once it is a table)\n"
            )
            continue
          }
          try served.tracker.rebound(name, to: binding.value)
          message = PreviewHub.layoutMessage(version: served.hub.current.version + 1)
        case .set:
          // A setting may change how the page is drawn (appearance, device, style): redrawn whole
          // when the page differs.
          let (html, json) = try screen(of: binding.value, named: name, at: statement.range)
          if html != served.hub.current.html {
            served.hub.publish(
              message: PreviewHub.layoutMessage(version: served.hub.current.version + 1), html: html,
              json: json)
          }
          continue
        default:
          guard let changing, ChangeTracker.depends(binding.value, on: changing) else { continue }
          guard let changeset = try served.tracker.takeChanges(of: name, value: binding.value),
            !changeset.update.isEmpty
          else { continue }
          message = Session.json(changeset.update)
        }
        guard let message else { continue }
        let (html, json) = try screen(of: binding.value, named: name, at: statement.range)
        served.hub.publish(message: message, html: html, json: json)
      } catch let diagnostic as Diagnostic {
        sayError("error: serving \(name): \(diagnostic.message.text)\n")
      } catch {
        sayError("error: serving \(name): \(error)\n")
      }
    }
  }
}
