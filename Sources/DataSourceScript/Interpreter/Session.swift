import DataSourceKit
import DataSourceKitRendering
import DataSourceKitValues
import Foundation

/// Where a session writes: results to `output`, diagnostics and timings to `errors`.
public protocol ScriptOutput: AnyObject {
  func write(_ text: String)
  func writeError(_ text: String)
}

/// One shell session: its bindings and settings, and the statements run in it.
///
/// A statement either completes or changes nothing: its expression is built and loaded before
/// any binding is touched.
///
/// A session lives on the main actor, as an app's view model would; its loads run there too
/// (async functions run where they are called). To stop a statement, cancel the `Task` that runs
/// it: loads and shows check for cancellation and leave everything as it was. Two sessions share
/// nothing.
///
/// Its parts: ``BindingTable`` (names and the definitions `save` replays), ``ChangeTracker``
/// (what `changes` and `watch` diff against), ``Evaluator`` (expressions into engine objects, one
/// per statement) and ``ScriptRunner`` (the script being run and the scripts sourcing it). Each
/// kind of statement has one handler, chosen in ``execute(_:)``.
@MainActor
public final class Session {
  public var settings = Settings()
  /// The settings the run began with: the defaults, or what the command line set.
  ///
  /// `save` writes the settings that differ from them (`--echo` is the run's, not the session's).
  public var startingSettings = Settings()
  /// The last error reported, for a host that says more of it (the line that opens a table a
  /// marker broke).
  public private(set) var lastReported: Diagnostic?
  /// Where output goes: batch until the shell turns interactive (`-i` after scripts).
  public var environment: Environment
  public let output: any ScriptOutput
  /// How far the running statement's loads have got; reset before each statement.
  public let progress = LoadProgress()
  /// Set by `quit`; the shell stops reading input.
  public internal(set) var quitRequested = false

  let bindings = BindingTable()
  let changes = ChangeTracker()
  let scripts = ScriptRunner()
  /// Counts statements run, so a template knows whether it was written in this one (and dsh
  /// whether piped input held any).
  public private(set) var statementSerial = 0
  /// The view each bound name was last shown in: it keeps its reuse pool between shows, and
  /// `stats NAME` reads what it did.
  var views: [String: ListView<Value, TableCell>] = [:]
  /// What the last `show` did, and of what.
  var lastShow: (name: String?, stats: ViewStats)?
  /// Set while a statement that changes data runs: which objects it may change (`nil` inside:
  /// anything), for the watched views' report after it.
  private var pendingWatchReport: Set<ObjectIdentifier>??
  /// The views `serve` keeps pages of, and the statement their pages are told of after it.
  lazy var serving = Serving(session: self)
  /// Starts the web servers of `serve` (``PreviewServers``); `nil` refuses `serve`.
  public var previewServers: (any PreviewServerStarting)? = PreviewServers()

  /// Whether any view is being served.
  public var isServing: Bool { serving.isServing }

  /// Stops every served view (dsh is leaving).
  public func stopServingAll() async { await serving.stopAll() }

  /// What loads and expressions noticed, printed after each statement.
  let notes = SessionNotes()
  /// What in-memory providers' items showed of their fields, kept while nothing changes.
  let scans = ItemScans()
  /// The files this session fetched from URLs or standard input, each kept while a provider
  /// reads it.
  let fetchedFiles = FetchedFiles()
  let seeds = DrawnSeeds()
  /// Changes providers found while a statement read them, told when it is done.
  let deferredChanges = DeferredChanges()

  public init(environment: Environment = .batch, output: any ScriptOutput) {
    self.environment = environment
    self.output = output
  }

  /// Whether the statements run now open a file named on dsh's command line: a note's advice
  /// then gives the flags that read it another way (`--null NA`).
  public var opensCommandLineFiles: Bool {
    get { notes.openingFromCommandLine }
    set { notes.openingFromCommandLine = newValue }
  }

  /// The names bound now, in order.
  public var boundNames: [String] { bindings.order }

  /// The known fields of a bound provider or table, for completion.
  public func fields(of name: String) -> [String] {
    switch bindings[name]?.value {
    case .provider(let p): p.provider.recordFields ?? []
    case .table(let t): t.recordFields ?? []
    case .presenter, .scalar, nil: []
    }
  }

  /// The segment names of a bound segmented source, for completion after `switch NAME to`.
  public func segments(of name: String) -> [String] {
    guard case .table(let table) = bindings[name]?.value, let segmented = Session.segmentedSource(in: table)
    else { return [] }
    return segmented.segments.map(\.name)
  }

  /// A path as written in the statement running now: relative to its script's folder, else to
  /// the working directory.
  func resolve(_ path: String) -> String { environment.resolve(path, in: scripts.current) }

  /// The evaluator of the statement running now.
  var evaluator: Evaluator {
    Evaluator(
      bindings: bindings, environment: environment, fetchedFiles: fetchedFiles, progress: progress,
      notes: notes, scans: scans,
      seeds: seeds, statement: statementSerial, source: scripts.current)
  }

  /// The evaluator of a statement whose rows are read later, if at all (`show`, `export`,
  /// `browse`, `let`): a database that runs the stages counts when its rows are first read.
  var readingEvaluator: Evaluator {
    var evaluator = self.evaluator
    evaluator.countsWhenRead = true
    return evaluator
  }

  /// The source text of a range in the statement being run.
  func text(_ range: SourceRange) -> String { scripts.current.text(range) }

  /// Runs every statement of `source`, reporting each failure and going on (or stopping at the
  /// first when `bail` is set).
  /// - Returns: whether every statement succeeded.
  @discardableResult
  public func run(_ source: SourceFile, bail: Bool = false) async -> Bool {
    let saved = scripts.current
    scripts.current = source
    defer { scripts.current = saved }
    var succeeded = true
    var echoed = 0
    for parsed in Parser.statements(of: source.text) {
      // ^C cancelled this run's task: the statements after the interrupted one do not run, and
      // a run that skipped statements did not succeed.
      if quitRequested { break }
      if Task.isCancelled {
        succeeded = false
        break
      }
      if settings.echo { echoed = echo(source, upTo: parsed.range, from: echoed) }
      let result = parsed.result
      progress.reset()
      let started = DispatchTime.now().uptimeNanoseconds
      let ok: Bool
      var reportedItself = false
      switch result {
      case .failure(let diagnostic):
        report(diagnostic, in: source)
        ok = false
      case .success(let statement):
        do {
          // ^C interrupts the database reads the statement blocks in, however deep.
          let interruption = ReadInterruption()
          // Providers that fail while the statement reads them tell their views once it is done.
          try await DeferredChanges.$current.withValue(deferredChanges) {
            try await ReadInterruption.$current.withValue(interruption) {
              try await withTaskCancellationHandler {
                try await execute(statement)
              } onCancel: {
                interruption.interruptAll()
              }
            }
          }
          ok = true
        } catch let diagnostic as Diagnostic {
          report(diagnostic, in: source)
          ok = false
        } catch is AlreadyReported {
          // The statement said why it failed itself (a sourced script, a refused batch).
          ok = false
          reportedItself = true
        } catch DataSourceError.cancelled {
          // ^C heard by work that throws the engine's cancellation past every handler that
          // would place it (a check reading a view's items): the statement was interrupted.
          report(Diagnostic(.interrupted, at: statement.range), in: source)
          ok = false
        } catch is CancellationError {
          report(Diagnostic(.interrupted, at: statement.range), in: source)
          ok = false
        } catch let error as DataSourceError {
          report(Diagnostic(.dataSource(error), at: statement.range), in: source)
          ok = false
        } catch {
          report(Diagnostic(.internalError("\(error)"), at: statement.range), in: source)
          ok = false
        }
      }
      // Providers that failed while the statement read them tell their views now; the watch
      // report reads views too, and what it finds is told once it is done.
      deferredChanges.deliver()
      DeferredChanges.$current.withValue(deferredChanges) { flushWatchReport() }
      deferredChanges.deliver()
      if let (statement, changing) = serving.pendingPublish {
        serving.pendingPublish = nil
        DeferredChanges.$current.withValue(deferredChanges) {
          serving.publish(after: statement, changing: changing)
        }
        deferredChanges.deliver()
      }
      // A statement that failed says why, and nothing of what it did on the way: a note of a
      // join built before a misspelt field was found, or of rows read before an error, is not
      // about anything it gave. (A sourced script's own statements told theirs as they ran.)
      let statementNotes = notes.take()
      if ok || reportedItself {
        for note in statementNotes { sayError("note: \(note)\n") }
      }
      if settings.timer {
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        output.writeError(String(format: "run time: %.6f s\n", seconds))
      }
      if !ok {
        succeeded = false
        if bail { break }
      }
    }
    return succeeded
  }

  /// Prints the script's text up to the end of a statement, from where the last echo ended:
  /// comments and blank lines as they are, the statement after the prompt (`dsh> `, `...> `).
  /// - Returns: where this echo ended.
  private func echo(_ source: SourceFile, upTo statement: SourceRange, from start: Int) -> Int {
    // A statement that shares a line with the one before was echoed with it.
    guard start <= statement.lowerBound else { return start }
    let bytes = Array(source.text.utf8)
    var end = min(statement.upperBound, bytes.count)
    while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
    let leading = String(decoding: bytes[start..<statement.lowerBound], as: UTF8.self)
    var text = ""
    // Whole lines before the statement (comments, blank lines); indentation before it on its
    // own line is not repeated.
    for line in leading.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
      text += line.trimmingCharacters(in: .whitespaces).isEmpty ? "\n" : line + "\n"
    }
    let statementText = Secrets.redacted(String(decoding: bytes[statement.lowerBound..<end], as: UTF8.self))
    for (index, line) in statementText.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      text += (index == 0 ? "dsh> " : "...> ") + line + "\n"
    }
    output.write(text)
    return min(end + 1, bytes.count)
  }

  /// Writes a message of dsh's own words around names and values from data.
  ///
  /// A field, a binding's summary, a note: every character a terminal would obey is written as `\u{…}`,
  /// on a terminal or not (`dsh … | less -R` obeys them too), so a header holding `ESC [ 2 K`
  /// cannot pass for one of dsh's own sequences. Data printed as data (`show … as csv`) is not a
  /// message and goes out as it is.
  func say(_ text: String) { output.write(TextWidth.escapedForTerminal(text)) }

  /// ``say(_:)`` on standard error: notes, warnings and errors outside a statement's place.
  func sayError(_ text: String) { output.writeError(TextWidth.escapedForTerminal(text)) }

  func report(_ diagnostic: Diagnostic, in source: SourceFile) {
    lastReported = diagnostic
    output.writeError(diagnostic.formatted(in: source, color: settings.usesColor(environment)) + "\n")
  }

  // MARK: Statements

  /// The value a statement prints or writes once: when it is a few rows (`ends`: the first and
  /// last asked for; `.some(nil)`, every row of a view that ends in a `limit`) of a view over a
  /// large file that nothing else holds, the file streamed, keeping only those rows
  /// (``Evaluator/streamedView(of:ends:fallback:)``); else evaluated as every statement is.
  ///
  /// - Returns: the value, and what `set stats on` says of the stream (`nil` without one).
  func readOnce(_ expression: Expression, ends: (front: Int, back: Int)??) async throws
    -> (ScriptValue, stream: String?)
  {
    var fallback: String?
    // A table's rows are its provider's, one a cell: the provider may stream, once the cell is
    // checked against the file's first rows (a misspelt field before the file is read).
    var rows = expression
    var ends = ends
    if ends != nil, let table = Evaluator.tableRows(of: expression) {
      try await readingEvaluator.checkCellOverFirstRows(table.provider, table.cell, what: .cellAfterWith)
      rows = table.provider
      // A header's or footer's aggregates read every row of their section: only a view that
      // ends in a limit, every row of which is held, streams.
      if table.decorated { ends = .some(nil) }
    }
    if let ends,
      let streamed = try await readingEvaluator.streamedView(of: rows, ends: ends, fallback: &fallback),
      case .provider(let provider) = streamed
    {
      var value = streamed
      if rows.range != expression.range {
        var evaluator = readingEvaluator
        evaluator.providedRows = (rows.range, streamed)
        value = try await evaluator.evaluate(expression)
      }
      // Under the stages over it: the slices of a `limit`, a `select` of `columns`.
      guard let stream = DataSourceKit.provider(below: provider.provider, as: StreamedView.self) else {
        return (value, nil)
      }
      return (
        value,
        "stats stream: the file read in \(stream.chunks) chunk\(stream.chunks == 1 ? "" : "s"), "
          + "\(stream.heldRows.count) row\(stream.heldRows.count == 1 ? "" : "s") kept\n"
      )
    }
    let value = try await readingEvaluator.evaluate(expression)
    return (value, fallback.map { "stats stream: the file read whole after all: \($0)\n" })
  }

  /// Runs one statement through its handler.
  ///
  /// A statement that may change data captures the baselines of views shown before it and
  /// reports watched views after it.
  ///
  /// One case per statement, each a call to its handler.
  func execute(_ statement: Statement) async throws {
    statementSerial += 1
    bindings.beginStatement()
    serving.pendingPublish = (statement, nil)
    if statement.mayChangeData { try beforeChange(by: statement) }
    if case .set = statement { serving.noteFramesBeforeSetting() }
    switch statement {
    case .binding(let name, let expression, let range):
      try await bind(name, to: expression, range: range)
    case .expression(let expression):
      try await printSummary(of: expression)
    case .showSwift(let expression, let range):
      // Checked as `explain` checks it (names, fields, templates; a large CSV file against its
      // first rows), then written from the statements: the program reads the rows when it runs.
      let value = try await planned(expression, by: planningEvaluator)
      output.write(try swiftProgram(for: expression, statement: text(range), shown: value))
    case .show(let expression, let rows, let mode, _):
      let (value, stream) = try await readOnce(expression, ends: printedEnds(rows, mode: mode))
      let shown = {
        try self.show(
          value, named: expression.boundName, rows: rows, mode: mode, expressionRange: expression.range)
      }
      // A few rows are read a page at a time, a statement each: a database finds a sorted
      // view's first page by a top-N, or a section's rows by its key, without sorting every
      // row for the stream a whole view is read by.
      if let most = printedRowsAtMost(rows, mode: mode), most <= Session.fewRowsRead {
        try shown()
      } else {
        // Printed as read unless a binding holds the sources: later statements read them again.
        let root = value.compositionRoot
        try readingInOrder(under: root, printed: !bindings.holdsSources(under: root), shown)
      }
      if settings.stats, let stream { say(stream) }
    case .browse(let expression, _):
      try await BrowseCommand(session: self).run(expression)
    case .describe(.provider(let database), _):
      if case .sqlite(let path, nil, nil) = database.source {
        try describeDatabase(path, at: database.argumentRange)
      } else if case .postgres(let url, nil, nil) = database.source {
        try await describePostgres(url, at: database.argumentRange)
      } else {
        try await describeOrExplain(statement)
      }
    case .describe, .explain:
      try await describeOrExplain(statement)
    case .help(let topic, _):
      try HelpCommand(session: self).run(topic)
    case .vars:
      try printBindings()
    case .set(let setting, let value, _):
      try set(setting, value)
    case .source(let path, let pathRange, _):
      try await source(path, pathRange: pathRange)
    case .quit:
      quitRequested = true
    case .switchSegment(let source, let segment, let range):
      try switchSegment(source, to: segment)
      recordEffect(of: statement, on: source, range: range)
    case .reload(let expression, _):
      try await reload(expression)
    case .stats(let name, _):
      try printStats(of: name)
    case .save(let path, let pathRange, let withExports, _):
      try save(to: path, pathRange: pathRange, withExports: withExports)
    case .export(let expression, let target, let range)
    where (target.format ?? ExportFormat(extensionOf: target.path)) == .swift:
      // Checked as `explain` checks it, then written from the statements, reading no rows.
      try checkExportTarget(target, formatToo: true)
      let value = try await planned(expression, by: planningEvaluator)
      let program = try swiftProgram(
        for: expression, statement: "show \(text(expression.range))", shown: value)
      try writeExport(Data(program.utf8), to: target, what: "a Swift program")
      let paths = writtenPaths(expression.filePaths + [(target.path, target.pathRange)], in: range)
      bindings.recordExport(text: text(range), paths: paths)
    case .export(let expression, let target, let range):
      _ = seeds.take()
      // The target is checked first: a bad one is the error before a file is read.
      try checkExportTarget(target, formatToo: true)
      // Every row of a view that ends in a limit, as `show … as csv` prints them: one road for
      // one answer.
      let (value, stream) = try await readOnce(expression, ends: .some(nil))
      let root = value.compositionRoot
      try readingInOrder(under: root, printed: !bindings.holdsSources(under: root)) {
        try export(value, to: target, expressionRange: expression.range)
      }
      if settings.stats, let stream { say(stream) }
      // Replayed by `save … with exports`, after what it read, its paths written relative and
      // the seeds random() drew written in.
      let (exported, paths) = DrawnSeeds.written(
        seeds.take(), into: text(range),
        paths: writtenPaths(expression.filePaths + [(target.path, target.pathRange)], in: range), at: range)
      bindings.recordExport(text: exported, paths: paths)
    case .edit(let target, let edit, let range):
      try apply(edit, to: target)
      recordEffect(of: statement, on: target, range: range)
    case .changes(let name, let json, _):
      try printChanges(of: name, json: json)
    case .check(let path, let pathRange, let counts, _):
      try checkBatch(in: path, pathRange: pathRange, counts: counts)
    case .watch(let name, let on, _):
      try watch(name, on: on)
    case .more(let name, let range):
      try await more(name)
      recordEffect(of: statement, on: name, range: range)
    case .serve(let name, let address, let on, let range):
      try await serving.serve(name, address: address, on: on, range: range)
    }
  }

  /// Before `statement` changes data (an edit, `reload`, `more`, `switch`, or `r` in browse):
  /// the views shown before it keep what they showed as their baselines, and once the running
  /// statement ends the watched views report and the served ones follow.
  func beforeChange(by statement: Statement) throws {
    let changing = changedObjects(by: statement)
    // Watched views report after the statement, and after one that failed part way too (a
    // reload that failed changed what they show): the run loop reports it after the error.
    pendingWatchReport = .some(changing)
    serving.pendingPublish = (statement, .some(changing))
    do {
      try changes.captureShownBaselines(bindings, changing: changing)
      // Only an edit is told item by item: before a reload, `more` or `switch`, a baseline kept
      // as a snapshot becomes a copy of what the view showed (after the statement, the items
      // it would be rebuilt from are gone).
      if case .edit = statement {
      } else {
        try changes.copySnapshotBaselines(bindings, changing: changing)
      }
      try serving.prepare(for: statement, changing: changing)
    } catch {
      throw Diagnostic(.interrupted, at: statement.range)
    }
  }

  /// Reports the watched views a statement that changes data changed, once it has ended.
  func flushWatchReport() {
    guard let changing = pendingWatchReport else { return }
    pendingWatchReport = nil
    reportWatched(changing: changing)
  }

  /// Logs a statement that changed data through `name`, for `save`.
  private func recordEffect(of statement: Statement, on name: Identifier, range: SourceRange) {
    var changesItems = true
    if case .switchSegment = statement { changesItems = false }
    bindings.recordEffect(
      on: name.name, changed: changedTargets(by: statement), text: text(range), changesItems: changesItems)
  }

  /// The engine objects a statement that changes data may change, or `nil` when it may change
  /// anything: views built on none of them are left alone (no baseline, no diff).
  private func changedObjects(by statement: Statement) -> Set<ObjectIdentifier>? {
    switch statement {
    case .edit, .more, .switchSegment:
      return Set(changedTargets(by: statement).map(ObjectIdentifier.init))
    case .reload(let expression, _):
      // Everything below the reloaded name loads again.
      guard let name = expression.boundName, let bound = bindings[name]?.value else { return nil }
      return ChangeTracker.parts(of: bound)
    default:
      return nil
    }
  }

  /// The object an edit, `more` or `switch` changes: the edited provider, the paged provider,
  /// the segmented source.
  private func changedTargets(by statement: Statement) -> [AnyObject] {
    func value(_ name: Identifier) -> ScriptValue? { bindings[name.name]?.value }
    switch statement {
    case .edit(let target, _, _):
      guard case .provider(let provider) = value(target) else { return [] }
      return [provider.provider]
    case .more(let target, _):
      guard let bound = value(target), let paging = Session.pagingProvider(in: bound) else { return [] }
      return [paging]
    case .switchSegment(let target, _, _):
      guard case .table(let table) = value(target), let segmented = Session.segmentedSource(in: table) else {
        return []
      }
      return [segmented]
    default:
      return []
    }
  }

  /// The file paths written in a statement at `range`, for `save` to write relative to the saved
  /// script; `samples:NAME` means the same file on every machine, so it is saved as written.
  private func writtenPaths(_ paths: [(path: String, range: SourceRange)], in range: SourceRange)
    -> [WrittenPath]
  {
    paths.filter { !$0.path.hasPrefix(SampleData.prefix) }.map { written in
      WrittenPath(
        literal: (written.range.lowerBound - range.lowerBound)..<(written.range.upperBound - range.lowerBound),
        absolute: FilePaths.absolute(resolve(written.path)))
    }
  }

  /// `let NAME = EXPRESSION`.
  private func bind(_ name: Identifier, to expression: Expression, range: SourceRange) async throws {
    _ = seeds.take()
    let value = try await readingEvaluator.evaluate(expression)
    // A watched name's new baseline comes first: a ^C there leaves the old binding in place.
    do {
      try changes.rebound(name.name, to: value)
    } catch {
      throw Diagnostic(.interrupted, at: name.range)
    }
    // A seed random() drew is written into the definition: `save` replays the same values.
    let (definition, paths) = DrawnSeeds.written(
      seeds.take(), into: text(range), paths: writtenPaths(expression.filePaths, in: range), at: range)
    bindings.bind(name.name, to: value, text: definition, paths: paths)
    // A new value is a new view: the old one's cells belonged to what was bound before.
    views[name.name] = nil
  }

  /// A bare expression: its one-line summary.
  private func printSummary(of expression: Expression) async throws {
    if case .name(let identifier) = expression, bindings[identifier.name] == nil {
      let candidates = Vocabulary.statementStarters + Vocabulary.expressionStarters + bindings.order
      throw Diagnostic(
        .unknownCommand(identifier.name, suggestion: suggestion(for: identifier.name, among: candidates)),
        at: identifier.range)
    }
    let value = try await evaluator.evaluate(expression)
    say(try summary(of: value, name: expression.boundName) + "\n")
  }

  /// `vars`.
  private func printBindings() throws(DataSourceError) {
    if bindings.order.isEmpty { output.write("no bindings yet; make one with: let NAME = EXPRESSION\n") }
    for name in bindings.order {
      if let binding = bindings[name] { say(try summary(of: binding.value, name: name) + "\n") }
    }
  }

  // MARK: Settings

  /// `set`: every setting as it is now; `set NAME VALUE`: one changed, as its declaration
  /// (``SettingName/spec``) reads the value.
  private func set(_ setting: Identifier?, _ value: Token?) throws {
    guard let setting else {
      for name in SettingName.allCases where !name.isAlias {
        output.write(name.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0))
        output.write(name.spec.shown(settings, environment) + "\n")
      }
      return
    }
    guard let name = SettingName(rawValue: setting.name) else {
      throw Diagnostic(
        .unknownSetting(
          setting.name, suggestion: suggestion(for: setting.name, among: SettingName.allCases.map(\.rawValue))
        ),
        at: setting.range)
    }
    guard let value else {
      throw Diagnostic(
        .expected(.settingValue(setting: setting.name), found: "end of line"), at: setting.range)
    }
    let given: SettingValue? =
      switch value.kind {
      case .identifier(let w), .string(let w): .word(w)
      case .int(let i): .number(i)
      default: nil
      }
    guard let given, name.spec.apply(&settings, given) else {
      if name == .mode, case .word(let w)? = given,
        let close = suggestion(for: w, among: RenderMode.allCases.map(\.rawValue))
      {
        throw Diagnostic(.unknownRenderMode(w, suggestion: close), at: value.range)
      }
      throw Diagnostic(
        .invalidSettingValue(setting: name, value: given?.text ?? value.kind.description), at: value.range)
    }
  }
}
