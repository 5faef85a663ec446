import DataSourceKit

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

  subscript(name: String) -> Binding? { values[name] }

  /// Starts a statement: nothing read yet.
  func beginStatement() { referenced = [] }

  /// The binding of a name, or the error that there is none (with a likely fix).
  func binding(named name: Identifier) throws(Diagnostic) -> Binding {
    guard let binding = values[name.name] else {
      throw Diagnostic(
        .unknownName(name.name, suggestion: suggestion(for: name.name, among: order)), at: name.range)
    }
    return binding
  }

  /// Looks a name up for an expression, remembering that the statement depends on it.
  func read(_ name: Identifier) throws(Diagnostic) -> Binding {
    let binding = try binding(named: name)
    referenced.insert(binding.logIndex)
    return binding
  }

  /// Binds (or binds again) a name; `text` is the statement as written, which `save` replays
  /// after the definitions it read.
  func bind(_ name: String, to value: ScriptValue, text: String) {
    if values[name] == nil { order.append(name) }
    definitions.append(Definition(name: name, text: text, dependencies: referenced.sorted()))
    values[name] = Binding(value: value, definition: text, logIndex: definitions.count - 1)
  }

  /// The definitions the current bindings need, in the order they first ran.
  func neededDefinitions() -> [Definition] {
    var needed = Set<Int>()
    var pending = order.compactMap { values[$0]?.logIndex }
    while let index = pending.popLast() {
      guard needed.insert(index).inserted else { continue }
      pending.append(contentsOf: definitions[index].dependencies)
    }
    return needed.sorted().map { definitions[$0] }
  }
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
}
