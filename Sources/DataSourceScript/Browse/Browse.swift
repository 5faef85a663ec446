import DataSourceKit
import DataSourceKitValues

extension Session {
  /// `browse X`: hands X's view to the host's full screen (``Environment/browser``), as a
  /// ``BrowseScreen`` that draws windows as `show` draws them and reloads X's sources on `r`.
  ///
  /// Without a screen (a script, a pipe, `TERM=dumb`) it is an error that points to `show`.
  func browse(_ expression: Expression) async throws {
    guard let browser = environment.browser else {
      throw Diagnostic(.browseNeedsTerminal, at: expression.range)
    }
    let value = try await readingEvaluator.evaluate(expression)
    let name = expression.boundName
    let (view, showsFields, columnSource) = try shownView(
      of: value, named: name, expressionRange: expression.range)
    let source = view.dataSource
    let range = expression.range
    // ^C while the rows were counted: the screen would say "no rows" of a view it never counted.
    _ = view.totalRows
    if view.wasInterrupted || Task.isCancelled { throw Diagnostic(.interrupted, at: range) }
    let screen = BrowseScreen(
      name: name ?? text(range).trimmingCharacters(in: .whitespaces), view: view, showsFields: showsFields,
      draw: { windows, options in
        var text = ""
        do {
          try Session.draw(
            view, showsFields: showsFields, columnSource: columnSource, windows: windows, options: options,
            to: { text += $0 },
            failure: {
              Diagnostic(.dataSource(.sourceFailed(message: source.errorDescription ?? "")), at: range)
            })
        } catch {
          // The status line says the source failed (its load state); the rows are not drawn.
          return ""
        }
        return text
      },
      reload: { [weak self] in
        // `r` is `reload X`: the views shown before it keep what they showed, and after the
        // browse the watched views report and the served ones follow.
        try self?.beforeChange(by: .reload(expression, range: range))
        return try await Session.reloadForBrowse(value)
      })
    screen.color = settings.usesColor(environment)
    screen.progress = progress
    await browser(screen)
    lastShow = (name, view.stats)
    // What `r` changed is reported against what was shown before, then the screen left is
    // what X shows.
    flushWatchReport()
    if let name { changes.shown(name) }
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
  }

  /// Where the screen stands now.
  public var place: Place { Place(top: top, horizontal: horizontal, visible: visible) }
}
