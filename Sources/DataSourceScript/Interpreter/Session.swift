import DataSourceKit
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
/// it: loads and shows check for cancellation and leave everything as it was.
@MainActor
public final class Session {
  public var settings = Settings()
  /// Where output goes: batch until the shell turns interactive (`-i` after scripts).
  public var environment: Environment
  public let output: any ScriptOutput
  /// How far the running statement's loads have got; reset before each statement.
  public let progress = LoadProgress()
  /// Set by `quit`; the shell stops reading input.
  public private(set) var quitRequested = false

  var bindings: [String: Binding] = [:]
  /// Names in the order they were first bound.
  var bindingOrder: [String] = []
  /// Every `let` that succeeded, in order: what `save` replays.
  var definitions: [Definition] = []
  /// The definitions the statement being run has read (by log index).
  var referencedDefinitions: Set<Int> = []
  /// Counts statements run, so a template knows whether it was written in this one.
  var statementSerial = 0
  /// The view each bound name was last shown in: it keeps its reuse pool between shows, and
  /// `stats NAME` reads what it did.
  var views: [String: ListView<Value>] = [:]
  /// What the last `show` did, and of what.
  var lastShow: (name: String?, stats: ViewStats)?
  /// What each name's view showed when it was last shown or its changes asked: `changes`
  /// and `watch` diff against it.
  var baselines: [String: [DiffSection<Value, ViewElement>]] = [:]
  /// Names whose changes print after every statement that changes them.
  var watched: [String] = []
  /// Names shown since data last changed: their baseline is what they show now.
  var shownSinceChange: Set<String> = []
  /// The source being run: statements slice their text out of it for `describe` and `vars`.
  var currentSource = SourceFile(name: nil, text: "")
  /// Scripts being sourced, innermost last, to refuse cycles.
  private var sourceStack: [String] = []
  static let maximumSourceDepth = 64

  public init(environment: Environment = .batch, output: any ScriptOutput) {
    self.environment = environment
    self.output = output
  }

  /// The names bound now, in order.
  public var boundNames: [String] { bindingOrder }

  /// The known fields of a bound provider or table, for completion.
  public func fields(of name: String) -> [String] {
    switch bindings[name]?.value {
    case .provider(let p): p.provider.knownFields ?? []
    case .table(let t): t.knownFields ?? []
    default: []
    }
  }

  /// The binding of a name, or the error that there is none (with a likely fix).
  func binding(named name: Identifier) throws -> Binding {
    guard let binding = bindings[name.name] else {
      throw Diagnostic(
        .unknownName(name.name, suggestion: suggestion(for: name.name, among: bindingOrder)), at: name.range)
    }
    return binding
  }

  /// The segment names of a bound segmented source, for completion after `switch NAME to`.
  public func segments(of name: String) -> [String] {
    guard case .table(let table) = bindings[name]?.value, let segmented = Session.segmentedSource(in: table)
    else { return [] }
    return segmented.segments.map(\.name)
  }

  /// Runs every statement of `source`, reporting each failure and going on (or stopping at the
  /// first when `bail` is set).
  /// - Returns: whether every statement succeeded.
  @discardableResult
  public func run(_ source: SourceFile, bail: Bool = false) async -> Bool {
    let saved = currentSource
    currentSource = source
    defer { currentSource = saved }
    var succeeded = true
    for result in Parser.parse(source.text) {
      if quitRequested { break }
      progress.reset()
      let started = DispatchTime.now().uptimeNanoseconds
      let ok: Bool
      switch result {
      case .failure(let diagnostic):
        report(diagnostic, in: source)
        ok = false
      case .success(let statement):
        do {
          try await execute(statement)
          ok = true
        } catch let diagnostic as Diagnostic {
          report(diagnostic, in: source)
          ok = false
        } catch let nested as NestedScriptFailure {
          _ = nested
          ok = false
        } catch {
          report(Diagnostic(.expected("a statement", found: "\(error)"), at: 0..<0), in: source)
          ok = false
        }
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

  func report(_ diagnostic: Diagnostic, in source: SourceFile) {
    output.writeError(diagnostic.formatted(in: source, color: settings.usesColor(environment)) + "\n")
  }

  /// The source text of a range in the statement being run.
  func text(_ range: SourceRange) -> String {
    let utf8 = currentSource.text.utf8
    guard range.lowerBound >= 0, range.upperBound <= utf8.count else { return "" }
    let start = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
    let end = utf8.index(start, offsetBy: range.count)
    return String(currentSource.text[start..<end])
  }

  // MARK: Statements

  func execute(_ statement: Statement) async throws {
    statementSerial += 1
    referencedDefinitions = []
    switch statement {
    case .edit, .reload, .switchSegment, .more: captureShownBaselines()
    default: break
    }
    switch statement {
    case .binding(let name, let expression, let range):
      let value = try await evaluate(expression)
      if bindings[name.name] == nil { bindingOrder.append(name.name) }
      definitions.append(
        Definition(name: name.name, text: text(range), dependencies: referencedDefinitions.sorted()))
      bindings[name.name] = Binding(value: value, definition: text(range), logIndex: definitions.count - 1)
      // A new value is a new view: the old one's cells belonged to what was bound before.
      views[name.name] = nil
      if watched.contains(name.name) {
        baselines[name.name] = viewData(of: value)
      } else {
        baselines[name.name] = nil
      }
    case .expression(let expression):
      if case .name(let identifier) = expression, bindings[identifier.name] == nil {
        let candidates = Parser.commands + Parser.expressionWords + bindingOrder
        throw Diagnostic(
          .unknownCommand(identifier.name, suggestion: suggestion(for: identifier.name, among: candidates)),
          at: identifier.range)
      }
      let value = try await evaluate(expression)
      var name: String?
      if case .name(let identifier) = expression { name = identifier.name }
      output.write(summary(of: value, name: name) + "\n")
    case .show(let expression, let rows, let mode, _):
      let value = try await evaluate(expression)
      var name: String?
      if case .name(let identifier) = expression { name = identifier.name }
      try show(value, named: name, rows: rows, mode: mode, expressionRange: expression.range)
    case .describe(let expression, _):
      let value = try await evaluate(expression)
      output.write(describe(value).joined(separator: "\n") + "\n")
    case .help(let topic, _):
      try help(topic)
    case .vars:
      if bindingOrder.isEmpty { output.write("no bindings yet; make one with: let NAME = EXPRESSION\n") }
      for name in bindingOrder {
        if let binding = bindings[name] { output.write(summary(of: binding.value, name: name) + "\n") }
      }
    case .set(let setting, let value, _):
      try set(setting, value)
    case .source(let path, let pathRange, _):
      try await source(path, pathRange: pathRange)
    case .quit:
      quitRequested = true
    case .switchSegment(let source, let segment, _):
      try switchSegment(source, to: segment)
    case .reload(let expression, _):
      try await reload(expression)
    case .stats(let name, _):
      try printStats(of: name)
    case .save(let path, let pathRange, _):
      try save(to: path, pathRange: pathRange)
    case .edit(let target, let edit, _):
      try apply(edit, to: target)
    case .changes(let name, let json, _):
      try printChanges(of: name, json: json)
    case .watch(let name, let on, _):
      try watch(name, on: on)
    case .more(let name, _):
      try await more(name)
    }
    switch statement {
    case .edit, .reload, .switchSegment, .more: reportWatched()
    default: break
    }
  }

  private func source(_ path: String, pathRange: SourceRange) async throws {
    if environment.sandbox != nil {
      throw Diagnostic(.refusedBySafeMode("sourcing other scripts (source \"\(path)\")"), at: pathRange)
    }
    let resolved = resolve(path)
    let canonical = URL(fileURLWithPath: resolved).standardizedFileURL.resolvingSymlinksInPath().path
    if sourceStack.contains(canonical) { throw Diagnostic(.sourceCycle(path: path), at: pathRange) }
    if sourceStack.count >= Session.maximumSourceDepth {
      throw Diagnostic(.sourceDepth(limit: Session.maximumSourceDepth), at: pathRange)
    }
    let text: String
    do {
      text = try ScriptFiles.read(resolved, displayPath: path)
    } catch let error as DataSourceError {
      throw Diagnostic(.dataSource(error), at: pathRange)
    }
    sourceStack.append(canonical)
    defer { sourceStack.removeLast() }
    let ok = await run(SourceFile(name: path, text: text))
    // The sourced script reported its own errors; the `source` statement fails without another message.
    if !ok { throw NestedScriptFailure() }
  }

  /// A path as given, relative to the session's working directory.
  func resolve(_ path: String) -> String {
    guard !path.hasPrefix("/"), let directory = environment.workingDirectory else { return path }
    return directory + "/" + path
  }

  // MARK: Settings

  private func set(_ setting: Identifier?, _ value: Token?) throws {
    guard let setting else {
      let width = settings.width.map(String.init) ?? "auto (\(settings.effectiveWidth(environment)))"
      let maxRows = settings.maxRows.map(String.init) ?? "auto (\(settings.effectiveMaxRows(environment)))"
      output.write(
        """
        mode     \(settings.mode.rawValue)
        width    \(width)
        maxrows  \(maxRows)
        color    \(settings.color.rawValue)
        timer    \(settings.timer ? "on" : "off")
        stats    \(settings.stats ? "on" : "off")

        """)
      return
    }
    guard let value else {
      throw Diagnostic(.expected("a value after '\(setting.name)'", found: "end of line"), at: setting.range)
    }
    func word() -> String? {
      switch value.kind {
      case .identifier(let w), .string(let w): w
      case .int(let i): String(i)
      default: nil
      }
    }
    func invalid(_ expected: String) -> Diagnostic {
      Diagnostic(
        .invalidSettingValue(
          setting: setting.name, value: word() ?? value.kind.description, expected: expected), at: value.range
      )
    }
    switch setting.name {
    case "mode":
      guard let w = word(), let mode = RenderMode(rawValue: w) else {
        if let w = word(), let close = suggestion(for: w, among: RenderMode.allCases.map(\.rawValue)) {
          throw Diagnostic(.unknownRenderMode(w, suggestion: close), at: value.range)
        }
        throw invalid("box, plain, markdown, csv or json")
      }
      settings.mode = mode
    case "width":
      if word() == "auto" {
        settings.width = nil
      } else if case .int(let n) = value.kind, (20...1000).contains(n) {
        settings.width = n
      } else {
        throw invalid("a number from 20 to 1000, or auto")
      }
    case "maxrows":
      if word() == "auto" {
        settings.maxRows = nil
      } else if case .int(let n) = value.kind, n >= 0 {
        settings.maxRows = n
      } else {
        throw invalid("a number of rows (0 shows all), or auto")
      }
    case "color":
      guard let w = word(), let choice = Settings.ColorChoice(rawValue: w) else {
        throw invalid("auto, on or off")
      }
      settings.color = choice
    case "timer", "stats":
      guard let w = word(), w == "on" || w == "off" else { throw invalid("on or off") }
      if setting.name == "timer" { settings.timer = w == "on" } else { settings.stats = w == "on" }
    default:
      throw Diagnostic(
        .unknownSetting(setting.name, suggestion: suggestion(for: setting.name, among: Settings.names)),
        at: setting.range)
    }
  }
}

/// A sourced script failed; it has reported its own errors already.
struct NestedScriptFailure: Error {}

/// Reads script files, with the engine's file errors.
enum ScriptFiles {
  static func read(_ path: String, displayPath: String) throws -> String {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw DataSourceError.fileNotFound(path: displayPath)
    }
    if isDirectory.boolValue { throw DataSourceError.isDirectory(path: displayPath) }
    guard let data = FileManager.default.contents(atPath: path) else {
      throw DataSourceError.unreadable(path: displayPath, reason: "permission denied")
    }
    guard let text = String(data: data, encoding: .utf8) else {
      throw DataSourceError.invalidUTF8(path: displayPath, line: 1)
    }
    return text
  }
}
