import DataSourceKit
import DataSourceKitValues

/// `browse X`: X's view handed to the host's full screen, and the views its keys open over it.
///
/// The session calls ``run(_:)`` for the statement; the screen calls back for `r` (a reload of
/// X's sources), a derived view (a key's statement, evaluated in the session) and `L` (a binding
/// made as if typed at the prompt).
@MainActor
struct BrowseCommand {
  unowned let session: Session

  /// `browse X`: hands X's view to the host's full screen (``Environment/browser``), as a
  /// ``BrowseScreen`` that draws windows as `show` draws them and reloads X's sources on `r`.
  ///
  /// Without a screen (a script, a pipe, `TERM=dumb`) it is an error that points to `show`.
  func run(_ expression: Expression) async throws {
    guard let browser = session.environment.browser else {
      throw Diagnostic(.browseNeedsTerminal, at: expression.range)
    }
    let value = try await session.readingEvaluator.evaluate(expression)
    let name = expression.boundName
    let statement = session.text(expression.range).trimmingCharacters(in: .whitespacesAndNewlines)
    let (screen, view) = try screen(
      of: value, expression: expression, name: name ?? statement, statement: statement, counted: nil)
    await browser(screen)
    session.lastShow = (name, view.stats)
    // What `r` changed is reported against what was shown before, then the screen left is
    // what X shows.
    session.flushWatchReport()
    if let name { session.changes.shown(name) }
  }

  /// The screen of `value`, the value of `expression`: its view drawn as `show` draws it, its
  /// sources reloaded on `r`, and the views its keys open over it evaluated here.
  private func screen(
    of value: ScriptValue, expression: Expression, name: String, statement: String, counted: CountedColumn?
  ) throws -> (BrowseScreen, ListView<Value, TableCell>) {
    let (view, showsFields, columnSource) = try session.shownView(
      of: value, named: expression.boundName, expressionRange: expression.range)
    let source = view.dataSource
    let range = expression.range
    // ^C while the rows were counted: the screen would say "no rows" of a view it never counted.
    _ = view.totalRows
    if view.wasInterrupted || Task.isCancelled { throw Diagnostic(.interrupted, at: range) }
    let screen = BrowseScreen(
      name: name, statement: statement, counted: counted, view: view, showsFields: showsFields,
      draw: { windows, options in
        var text = ""
        do {
          try Session.draw(
            view, showsFields: showsFields, columnSource: columnSource, windows: windows, options: options,
            to: { text += $0 },
            failure: {
              Diagnostic(.dataSource(source.loadError ?? .sourceFailed(message: "")), at: range)
            })
        } catch {
          // The status line says the source failed (its load state); the rows are not drawn.
          return ""
        }
        return text
      },
      reload: { [weak session] in
        // `r` is `reload X`: the views shown before it keep what they showed, and after the
        // browse the watched views report and the served ones follow.
        try session?.beforeChange(by: .reload(expression, range: range))
        return try await BrowseCommand.reloadForBrowse(value)
      },
      open: { [weak session] derivation in
        guard let session else { throw CancellationError() }
        return try await BrowseCommand(session: session).openScreen(derivation)
      },
      bind: { [weak session] name, statement in
        guard let session else { return }
        try await BrowseCommand(session: session).bind(name, statement)
      })
    screen.color = session.settings.usesColor(session.environment)
    screen.progress = session.progress
    return (screen, view)
  }

  /// The screen of a view a key opened over another: its statement parsed and evaluated as if
  /// typed after `browse`, and written to the line editor's history as such.
  private func openScreen(_ derivation: BrowseDerivation) async throws -> BrowseScreen {
    let typed = "browse " + derivation.statement
    let source = SourceFile(name: "(browse)", text: typed)
    guard case .success(.browse(let expression, _))? = Array(Parser.statements(of: typed)).first?.result
    else {
      throw BrowseDerivation.Refusal(reason: "the statement does not read back: \(typed)")
    }
    session.environment.history?(typed)
    let saved = session.scripts.current
    session.scripts.current = source
    defer { session.scripts.current = saved }
    do {
      let value = try await session.readingEvaluator.evaluate(expression)
      return try screen(
        of: value, expression: expression, name: derivation.statement, statement: derivation.statement,
        counted: derivation.counts
      ).0
    } catch let diagnostic as Diagnostic {
      // Said on the status line: the statement, and the error's place in it.
      throw BrowseDerivation.Refusal(reason: diagnostic.message.text)
    }
  }

  /// `let NAME = STATEMENT` for a view browse shows (`L`): run as if typed at the prompt, and
  /// kept in the history; the browse statement running around it publishes to served pages
  /// when it ends, as it would have.
  private func bind(_ name: String, _ statement: String) async throws {
    let typed = "let \(name) = \(statement)"
    guard case .success(let parsed)? = Array(Parser.statements(of: typed)).first?.result,
      case .binding = parsed
    else {
      throw BrowseDerivation.Refusal(reason: "\(name) is not a name a let can bind")
    }
    let publishing = session.serving.pendingPublish
    let saved = session.scripts.current
    session.scripts.current = SourceFile(name: "(browse)", text: typed)
    defer {
      session.scripts.current = saved
      session.serving.pendingPublish = publishing
    }
    try await session.execute(parsed)
    session.environment.history?(typed)
  }

  /// The most rows a view may have for browse's `r` to mark what a reload changed.
  ///
  /// Marking copies every row before the reload and compares them after: a key that costs the
  /// view, not the screen (52 s for a 3M-row sorted SQLite view). Past it, `r` reloads and says
  /// that it marked nothing.
  static let maximumMarkedReloadRows = 100_000

  /// Loads a browsed value's sources again and returns the batch that turns what it showed into
  /// what it shows now, worked out as `changes` works it out; `nil` when the view has more rows
  /// than ``maximumMarkedReloadRows``.
  static func reloadForBrowse(_ value: ScriptValue) async throws -> BatchUpdate? {
    let baseline: Baseline?
    do {
      // A copy of every row, not a snapshot of an edited table's arrangement: a reload
      // replaces the rows wholesale, as `reload` copies its views' baselines first.
      baseline = try ChangeTracker.viewData(of: value, maximumRows: maximumMarkedReloadRows).map(
        Baseline.whole)
    } catch is ViewTooLargeToDiff {
      baseline = nil
    }
    switch value {
    case .provider(let provider): try await provider.provider.reload()
    case .table(let table): try await table.reload()
    case .presenter, .scalar: return nil
    }
    guard let baseline else { return nil }
    do {
      return try ChangeTracker.changes(since: baseline, in: value)?.changeset.update
    } catch is ViewTooLargeToDiff {
      return nil
    }
  }
}

extension BrowseScreen {
  /// Where the screen stands: the first row on it, the rows it shows, and how far a wide table
  /// is scrolled sideways.
  public struct Place: Equatable, Sendable {
    public var top: Int
    public var horizontal: Int
    public var visible: Range<Int>
    public var cursor: Int
    public var column: Int
  }

  /// Where the screen stands now.
  public var place: Place {
    Place(top: top, horizontal: horizontal, visible: visible, cursor: cursor, column: column)
  }
}
