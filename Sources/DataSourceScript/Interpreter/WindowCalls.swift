import DataSourceKit
import DataSourceKitRelational
import DataSourceKitValues

// `extend` fields over the other items: window functions (`rank() by score desc`) and
// aggregates (`x / sum(x) within section`, `sum(x) by day` running), computed by
// ``WindowFieldsProvider``.

/// A window function or aggregate as written in an `extend` field.
struct WindowCallSource {
  enum Kind {
    case function(WindowFunction, name: CallName)
    case aggregate(AggregateCall)
  }
  var kind: Kind
  var arguments: [ValueExpression]
  /// The call as written, `rank()`.
  var range: SourceRange

  var isRandom: Bool {
    if case .function(.random, _) = kind { return true }
    return false
  }
}

extension ValueExpression {
  /// Whether a window function or an aggregate is called anywhere in it.
  var callsWindowOrAggregate: Bool {
    switch self {
    case .field, .literal: false
    case .list(let items, _): items.contains { $0.callsWindowOrAggregate }
    case .negate(let inner, _), .not(let inner, _): inner.callsWindowOrAggregate
    case .binary(let a, _, let b, _): a.callsWindowOrAggregate || b.callsWindowOrAggregate
    case .call(let name, let arguments, _):
      name.aggregate != nil || name.window != nil || arguments.contains { $0.callsWindowOrAggregate }
    }
  }

  /// The expression with each window function and aggregate in it replaced by the field its
  /// value is read from (``WindowFieldsProvider/callField(_:)``), and the calls in order.
  func extractingWindowCalls(_ calls: inout [WindowCallSource], text: (SourceRange) -> String) throws
    -> ValueExpression
  {
    func placeholder(_ range: SourceRange) -> ValueExpression {
      .field(FieldPath(components: [WindowFieldDefinition.callField(calls.count - 1)], range: range))
    }
    if let aggregate = try aggregateCall(text: text) {
      if let argument = aggregate.argument, argument.callsWindowOrAggregate {
        throw Diagnostic(
          .windowInWindow(text(argument.range), outer: aggregate.function.rawValue), at: argument.range)
      }
      calls.append(
        WindowCallSource(
          kind: .aggregate(aggregate), arguments: aggregate.argument.map { [$0] } ?? [],
          range: aggregate.range))
      return placeholder(aggregate.range)
    }
    switch self {
    case .field, .literal: return self
    case .list(let items, let range):
      return .list(try items.map { try $0.extractingWindowCalls(&calls, text: text) }, range: range)
    case .negate(let inner, let range):
      return .negate(try inner.extractingWindowCalls(&calls, text: text), range: range)
    case .not(let inner, let range):
      return .not(try inner.extractingWindowCalls(&calls, text: text), range: range)
    case .binary(let a, let op, let b, let operatorRange):
      return .binary(
        try a.extractingWindowCalls(&calls, text: text), op, try b.extractingWindowCalls(&calls, text: text),
        operatorRange: operatorRange)
    case .call(let name, let arguments, let range):
      guard let function = name.window else {
        return .call(
          name, try arguments.map { try $0.extractingWindowCalls(&calls, text: text) }, range: range)
      }
      guard function.arguments.contains(arguments.count) else {
        throw Diagnostic(.functionArgumentCount(name.name, signature: function.signature), at: range)
      }
      if let inner = arguments.first(where: { $0.callsWindowOrAggregate }) {
        throw Diagnostic(.windowInWindow(text(inner.range), outer: name.name), at: inner.range)
      }
      calls.append(
        WindowCallSource(kind: .function(function, name: name), arguments: arguments, range: range))
      return placeholder(range)
    }
  }
}

extension Evaluator {
  /// Whether an `extend` has a field over the other items, so that it runs as a window.
  static func needsWindow(_ definitions: [FieldDefinition]) -> Bool {
    definitions.contains { $0.window != nil || $0.expression.callsWindowOrAggregate }
  }

  /// `extend` with window functions or aggregates: every field of it, checked against the
  /// items' fields, computed over all the items.
  func windowFields(_ definitions: [FieldDefinition], of provider: ProviderValue, stage: Stage) throws
    -> WindowFieldsProvider
  {
    let fields = try windowFieldList(definitions, of: provider)
    for (definition, field) in zip(definitions, fields) where field.withinSection {
      if provider.provider.numberOfSections <= 1,
        provider.provider.numberOfSections == 0 || provider.provider.sectionKey(0) == nil
      {
        notes.collector.add(.withinSectionWithoutSections(field: definition.name.name))
      }
    }
    return WindowFieldsProvider(
      base: provider.provider, fields: fields, label: text(stage.range), notes: notes.collector)
  }

  /// Whether an `extend` over the other items draws `random()` (a seed is drawn as its fields
  /// are made: they are made once, by the stage in memory).
  static func drawsRandom(_ definitions: [FieldDefinition], text: (SourceRange) -> String) -> Bool {
    definitions.contains { definition in
      var calls: [WindowCallSource] = []
      _ = try? definition.expression.extractingWindowCalls(&calls, text: text)
      return calls.contains(where: \.isRandom)
    }
  }

  /// The fields of an `extend` over the other items, each checked against the items' fields.
  func windowFieldList(_ definitions: [FieldDefinition], of provider: ProviderValue) throws
    -> [WindowFieldsProvider.Field]
  {
    let checker = try checker(for: provider)
    return try definitions.map { definition in
      var calls: [WindowCallSource] = []
      let rewritten = try definition.expression.extractingWindowCalls(&calls, text: { self.text($0) })
      if let clause = definition.window, calls.isEmpty {
        throw Diagnostic(.windowClauseWithoutWindow(definition.name.name), at: clause.range)
      }
      // random() draws per item: an order or a section would be silently ignored.
      if let clause = definition.window, calls.allSatisfy({ $0.isRandom }) {
        throw Diagnostic(.windowClauseOnRandom(definition.name.name), at: clause.range)
      }
      var engineCalls: [WindowFieldsProvider.Call] = []
      var types: [ValueType?] = []
      for call in calls {
        switch call.kind {
        case .aggregate(let aggregate):
          // A running list is a list per item of every item before it: n² values.
          if aggregate.function == .list, definition.window?.order.isEmpty == false {
            throw Diagnostic(.runningList(aggregate.text), at: aggregate.range)
          }
          let (checked, type) = try aggregate.checked(checker)
          engineCalls.append(WindowFieldsProvider.Call(kind: .aggregate(checked), argument: checked.argument))
          types.append(type)
        case .function(.random, let name):
          // The seed is written out, or drawn once now: the view's values stay through edits.
          var seed = UInt64.random(in: 0...UInt64.max)
          if call.arguments.isEmpty { seeds.drew(seed, at: call.range) }
          if let argument = call.arguments.first {
            // A negative seed is written with a minus: the parser reads `-1` as a negation.
            let written: Int
            switch argument {
            case .literal(.int(let n), _): written = n
            case .negate(.literal(.int(let n), _), _) where n != Int.min: written = -n
            default:
              throw Diagnostic(
                .functionArgumentType(
                  name.name,
                  argument: "'\(text(argument.range))' as its seed (a whole number, written out: 42)",
                  signature: WindowFunction.random.signature), at: argument.range)
            }
            seed = UInt64(bitPattern: Int64(written))
          }
          var engineCall = WindowFieldsProvider.Call(kind: .function(.random), argument: nil)
          engineCall.seed = seed
          engineCalls.append(engineCall)
          types.append(.double)
        case .function(let function, let name):
          let value = try call.arguments.first.map { try checker.check($0) }
          var offset = 1
          if call.arguments.count > 1 {
            guard case .literal(.int(let k), _) = call.arguments[1], k >= 0 else {
              throw Diagnostic(
                .functionArgumentType(
                  name.name,
                  argument:
                    "'\(text(call.arguments[1].range))' as its offset (a whole number from 0, written out: 2)",
                  signature: function.signature), at: call.arguments[1].range)
            }
            offset = k
          }
          let fallback = try call.arguments.count > 2 ? checker.check(call.arguments[2]) : nil
          engineCalls.append(
            WindowFieldsProvider.Call(
              kind: .function(function), argument: value?.expression, offset: offset,
              fallback: fallback?.expression))
          types.append(function.resultType(value?.type, fallback: fallback?.type))
        }
      }
      let order = try (definition.window?.order ?? []).map { key in
        WindowFieldsProvider.OrderKey(
          expression: try checker.check(key.expression).expression, direction: key.direction)
      }
      // The field is its one call (`rank()`), or an expression around its calls (`x / sum(x)`),
      // checked with each call's value as a field of its type.
      var expression: RowExpression?
      var type = types.first ?? nil
      let isTheCall: Bool =
        if calls.count == 1, case .field(let path) = rewritten,
          path.components == [WindowFieldDefinition.callField(0)]
        {
          true
        } else {
          false
        }
      if !isTheCall {
        let hidden = Dictionary(
          uniqueKeysWithValues: types.indices.map { (WindowFieldDefinition.callField($0), types[$0]) })
        let scope = FieldScope(
          field: { path in
            if path.components.count == 1, let type = hidden[path.components[0]] {
              return FieldInfo(type: type, profile: nil)
            }
            return try checker.scope.field(path)
          }, sourceKind: checker.scope.sourceKind)
        let typed = try ExpressionChecker(scope: scope, text: checker.text).check(rewritten)
        expression = typed.expression
        type = typed.type
      }
      let partition = try definition.window?.partition.map { try checker.check($0).expression }
      return WindowFieldsProvider.Field(
        name: definition.name.name, calls: engineCalls, order: order,
        withinSection: definition.window?.withinSection ?? false, partition: partition,
        expression: expression,
        type: type)
    }
  }
}

/// The seeds `random()` drew in the statement running now (one without a seed draws its own),
/// so that `save` writes `random(SEED)` and its script replays the same values.
final class DrawnSeeds {
  private var drawn: [(range: SourceRange, seed: UInt64)] = []

  func drew(_ seed: UInt64, at range: SourceRange) { drawn.append((range, seed)) }

  /// The seeds drawn since the last call.
  func take() -> [(range: SourceRange, seed: UInt64)] {
    defer { drawn = [] }
    return drawn
  }

  /// `text`, a statement at `statement`, with each call that drew a seed written with it, and
  /// the paths after it moved along.
  static func written(
    _ seeds: [(range: SourceRange, seed: UInt64)], into text: String, paths: [WrittenPath],
    at statement: SourceRange
  ) -> (text: String, paths: [WrittenPath]) {
    var bytes = Array(text.utf8)
    var paths = paths
    // From the last call back, so that the places before it stay where they are.
    for (range, seed) in seeds.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
      let call = (range.lowerBound - statement.lowerBound)..<(range.upperBound - statement.lowerBound)
      // A call in another definition's text (a name's value is not evaluated again).
      guard call.lowerBound >= 0, call.upperBound <= bytes.count else { continue }
      let replacement = Array("random(\(Int64(bitPattern: seed)))".utf8)
      bytes.replaceSubrange(call, with: replacement)
      let shift = replacement.count - call.count
      for index in paths.indices where paths[index].literal.lowerBound >= call.upperBound {
        paths[index].literal =
          (paths[index].literal.lowerBound + shift)..<(paths[index].literal.upperBound + shift)
      }
    }
    return (String(decoding: bytes, as: UTF8.self), paths)
  }
}
