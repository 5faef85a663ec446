import DataSourceKit
import DataSourceKitValues
import Foundation

/// The names bound in a session, and the log of definitions that made them: what `save`
/// replays.
@MainActor
final class BindingTable {
  private var values: [String: Binding] = [:]
  /// Names in the order they were first bound.
  private(set) var order: [String] = []
  /// Every `let` that succeeded, in order.
  private var definitions: [Definition] = []
  /// The definitions the statement being run has read (by log index).
  private var referenced: Set<Int> = []
  /// The log's length after it was last compacted.
  private var compactedCount = 0
  subscript(name: String) -> Binding? { values[name] }

  /// Starts a statement: nothing read yet.
  func beginStatement() { referenced = [] }

  /// The binding of a name, or the error that there is none (with a likely fix).
  func binding(named name: Identifier) throws(Diagnostic) -> Binding {
    guard let binding = values[name.name] else {
      throw Diagnostic(
        .unknownName(
          name.name, suggestion: suggestion(for: name.name, among: order) ?? Self.partOfOne(name.name, order)),
        at: name.range)
    }
    return binding
  }

  /// The one name that has `word` as one of its parts between underscores (`weather` for
  /// `seattle_weather`, the name `dsh seattle-weather.csv` binds), or `nil`.
  private static func partOfOne(_ word: String, _ names: [String]) -> String? {
    let matches = names.filter { $0.split(separator: "_").contains { $0 == word } }
    return matches.count == 1 ? matches[0] : nil
  }

  /// Looks a name up for an expression, remembering that the statement depends on it.
  func read(_ name: Identifier) throws(Diagnostic) -> Binding {
    let binding = try binding(named: name)
    referenced.insert(binding.logIndex)
    return binding
  }

  /// Binds (or binds again) a name; `text` is the statement as written, which `save` replays
  /// after the definitions it read, with the file paths written in it.
  func bind(_ name: String, to value: ScriptValue, text: String, paths: [WrittenPath]) {
    if values[name] == nil { order.append(name) }
    definitions.append(
      Definition(
        name: name, text: text, dependencies: referenced.sorted(), paths: paths, isEffect: false, changes: [])
    )
    values[name] = Binding(value: value, definition: text, logIndex: definitions.count - 1)
    // Rebinding a name 400,000 times must not keep 400,000 definitions: once the log has
    // doubled, what no binding needs any more is dropped (amortized O(1) a statement).
    if definitions.count > max(1_024, 2 * compactedCount) { compact() }
  }

  /// Drops the definitions and changes no current binding needs, renumbering the rest.
  ///
  /// One that is not needed now never will be: a later statement can only read what is bound
  /// now.
  private func compact() {
    let kept = neededIndices().sorted()
    var newIndex: [Int: Int] = [:]
    for (position, old) in kept.enumerated() { newIndex[old] = position }
    definitions = kept.map { old in
      var definition = definitions[old]
      definition.dependencies = definition.dependencies.compactMap { newIndex[$0] }
      definition.changes = definition.changes.compactMap { newIndex[$0] }
      return definition
    }
    for (name, binding) in values {
      if let index = newIndex[binding.logIndex] { values[name]?.logIndex = index }
    }
    referenced = []
    compactedCount = definitions.count
  }

  /// Logs a statement that changed data (an edit, `switch`, `more`) through `name`: `save`
  /// replays it, after what it was written against, as long as the definition of any name that
  /// holds the changed object now (`let b = a` makes two) is needed.
  ///
  /// - Complexity: O(bindings): edits are rare next to definitions, which stay O(1).
  ///
  /// - Parameter changesItems: whether the items changed (an edit, `more`), not only which of
  ///   them show (`switch`): an item's definition cannot show the first kind.
  func recordEffect(on name: String, changed: [AnyObject], text: String, changesItems: Bool) {
    guard let binding = values[name] else { return }
    let targets = Set(changed.map(ObjectIdentifier.init))
    var holders = [binding.logIndex]
    for other in values.values where other.logIndex != binding.logIndex {
      if let object = Self.root(of: other.value), targets.contains(ObjectIdentifier(object)) {
        holders.append(other.logIndex)
      }
    }
    definitions.append(
      Definition(
        name: name, text: text, dependencies: [binding.logIndex], paths: [], isEffect: true, changes: holders,
        changesItems: changesItems))
  }

  /// The definition of a bound name as written, the files its paths named, and the statements
  /// that changed its data since (edits and `more`; a `switch` shows another segment of the same
  /// data).
  func definition(of name: String) -> (text: String, paths: [WrittenPath], changes: [String])? {
    guard let binding = values[name] else { return nil }
    let changes = definitions.filter {
      $0.isEffect && $0.changes.contains(binding.logIndex) && $0.changesItems
    }
    return (definitions[binding.logIndex].text, definitions[binding.logIndex].paths, changes.map(\.text))
  }

  /// Logs an `export` that ran: `save … with exports` replays it after what it read.
  func recordExport(text: String, paths: [WrittenPath]) {
    definitions.append(
      Definition(
        name: "", text: text, dependencies: referenced.sorted(), paths: paths, isEffect: false, changes: [],
        isExport: true))
  }

  /// How many exports the log holds.
  var exportCount: Int { definitions.filter(\.isExport).count }

  /// Whether a source under `root` is part of a bound value: it outlives the statement, and
  /// later ones (browse, a served page, a reload) may read its rows again.
  func holdsSources(under root: Any) -> Bool {
    let bound = Set(
      values.values.flatMap { binding in
        Self.root(of: binding.value).map { compositionNodes(under: $0).map(ObjectIdentifier.init) } ?? []
      })
    return compositionNodes(under: root).contains { bound.contains(ObjectIdentifier($0)) }
  }

  /// The engine object a value is: its provider, or its table.
  private static func root(of value: ScriptValue) -> AnyObject? {
    switch value {
    case .provider(let provider): provider.provider
    case .table(let table): table
    case .presenter, .scalar: nil
    }
  }

  /// The definitions the current bindings need, and the changes made to those values since, in
  /// the order they first ran.
  ///
  /// With `exports`, the exports that ran too, and what they read.
  func neededDefinitions(exports: Bool = false) -> [Definition] {
    neededIndices(exports: exports).sorted().map { definitions[$0] }
  }

  /// The log indices of ``neededDefinitions(exports:)``.
  ///
  /// Compacting the log keeps what exports need, so a later `save … with exports` still has it.
  private func neededIndices(exports: Bool = true) -> Set<Int> {
    var needed = Set<Int>()
    var pending = order.compactMap { values[$0]?.logIndex }
    if exports { pending += definitions.indices.filter { definitions[$0].isExport } }
    while let index = pending.popLast() {
      guard needed.insert(index).inserted else { continue }
      pending.append(contentsOf: definitions[index].dependencies)
    }
    // A change is needed when a definition that made what it changed is, and with it what its
    // text was written against (an alias since rebound, say).
    var added = true
    while added {
      added = false
      for (index, definition) in definitions.enumerated()
      where definition.isEffect && !needed.contains(index)
        && definition.changes.contains(where: needed.contains)
      {
        added = true
        pending = [index]
        while let next = pending.popLast() {
          guard needed.insert(next).inserted else { continue }
          pending.append(contentsOf: definitions[next].dependencies)
        }
      }
    }
    return needed
  }
}

/// A file path written in a definition: where its string literal is in the text, and the file
/// it named (absolute), so `save` can write it relative to the saved script.
struct WrittenPath {
  var literal: Range<Int>
  var absolute: String
}

/// A name's binding.
struct Binding {
  var value: ScriptValue
  /// The statement's source text, as written.
  var definition: String
  /// Its place in the session's log of definitions, for `save`.
  var logIndex: Int
}

/// A `let` that succeeded, with the definitions it read (by their log index): `save` writes
/// what the current bindings need, in the order it was first run.
struct Definition {
  var name: String
  var text: String
  var dependencies: [Int]
  var paths: [WrittenPath]
  /// A change to the value of `name` rather than its definition.
  var isEffect: Bool
  /// For a change: the definitions of the names that held what it changed.
  var changes: [Int]
  /// For a change: whether it changed items (an edit, `more`) rather than which segment shows.
  var changesItems = false
  /// An `export`, replayed only by `save … with exports`.
  var isExport = false

  /// The text with each file path written relative to `folder` (where the script replaying it
  /// will be), since a script's paths resolve against its own folder.
  func text(relativeTo folder: String) -> String {
    var bytes = Array(text.utf8)
    for path in paths.sorted(by: { $0.literal.lowerBound > $1.literal.lowerBound }) {
      guard path.literal.upperBound <= bytes.count else { continue }
      let relative = FilePaths.quoted(FilePaths.relative(path.absolute, from: folder))
      bytes.replaceSubrange(path.literal, with: Array(relative.utf8))
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}

/// Paths between folders.
enum FilePaths {
  /// `target` as a path relative to `folder` (both absolute): `../data/people.csv`.
  ///
  /// Both are resolved through symbolic links first: the system follows a link before it
  /// climbs `..`, so a relative path worked out on the names alone could lead elsewhere.
  static func relative(_ target: String, from folder: String) -> String {
    let to = URL(fileURLWithPath: target).standardizedFileURL.resolvingSymlinksInPath().pathComponents
    let from = URL(fileURLWithPath: folder).standardizedFileURL.resolvingSymlinksInPath().pathComponents
    var common = 0
    while common < min(to.count - 1, from.count), to[common] == from[common] { common += 1 }
    let ups = Array(repeating: "..", count: from.count - common)
    return (ups + to[common...]).joined(separator: "/")
  }

  /// A string literal as dsh reads it: quotes and backslashes escaped, control characters as
  /// `\n`, `\t` or `\u{…}`.
  static func quoted(_ text: String) -> String { QuotedLiteral.dsh.quoted(text) }

  /// A path made absolute against the process's working directory.
  static func absolute(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
  }
}
