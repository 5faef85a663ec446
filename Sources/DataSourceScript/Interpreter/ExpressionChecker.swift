import DataSourceKit
import DataSourceKitValues

/// What an expression may read: the item's fields, each with what is known of its type.
struct FieldScope {
  /// What a field path is: checked (an unknown field throws) and typed.
  var field: (FieldPath) throws -> FieldInfo
  /// The kind of source the fields come from (`csv`, `sqlite`), for fixes that name an option.
  var sourceKind: ProviderKind?
}

/// A field as an expression sees it.
struct FieldInfo {
  /// `nil` when not known before the items are read (a schemaless source, a nested path).
  var type: ValueType?
  var profile: FieldProfile?
}

/// An expression checked and typed, ready to run in memory or be pushed down.
struct TypedExpression {
  var expression: RowExpression
  /// `nil` when not known until run time.
  var type: ValueType?
}

/// Checks expressions as written against the fields they read, and turns them into the
/// engine's ``RowExpression``.
///
/// Types are checked where they are known: comparing text with a number, adding a date to
/// text, or calling `lower` on a number is an error at the statement, naming the field's type
/// and a fix. Where a type is not known (a schemaless source), the expression runs and the
/// engine's rules apply (a comparison of unlike values is false, with a note).
struct ExpressionChecker {
  let scope: FieldScope
  /// The statement's text, for naming parts of expressions in messages.
  let text: (SourceRange) -> String

  func check(_ expression: ValueExpression) throws -> TypedExpression {
    switch expression {
    case .field(let path):
      let info = try scope.field(path)
      return TypedExpression(expression: .field(path.components), type: info.type)
    case .literal(let value, _):
      return TypedExpression(expression: .literal(value), type: value.type)
    case .list(let items, _):
      let checked = try items.map(check)
      let literal = checked.allSatisfy { if case .literal = $0.expression { true } else { false } }
      if literal {
        return TypedExpression(
          expression: .literal(
            .list(checked.map { if case .literal(let v) = $0.expression { v } else { .null } })),
          type: .list)
      }
      return TypedExpression(expression: .list(checked.map(\.expression)), type: .list)
    case .negate(let inner, _):
      let checked = try check(inner)
      if let type = checked.type, type != .null, !type.isNumber {
        throw Diagnostic(.negateNonNumber(describe(inner, type)), at: inner.range)
      }
      return try folded(
        TypedExpression(expression: .negate(checked.expression), type: checked.type), at: expression.range)
    case .not(let inner, _):
      let checked = try check(inner)
      try requireBool(checked, inner)
      return try folded(
        TypedExpression(expression: .not(checked.expression), type: .bool), at: expression.range)
    case .binary(let left, let op, let right, let operatorRange):
      return try binary(left, op, right, operatorRange: operatorRange)
    case .call(let name, let arguments, let range):
      return try call(name, arguments, range: range)
    }
  }

  /// A `where` or `cells when` test: the expression must be true or false.
  func checkTest(_ expression: ValueExpression) throws -> TypedExpression {
    let checked = try check(expression)
    try requireBool(checked, expression)
    return checked
  }

  private func requireBool(_ checked: TypedExpression, _ expression: ValueExpression) throws {
    guard let type = checked.type, type != .bool, type != .null else { return }
    let fix: TypeFix? =
      switch type {
      case .int, .double: .compareNumber(text(expression.range))
      case .text: .compareText(text(expression.range))
      case .bool, .null, .date, .timestamp, .list, .record: nil
      }
    throw Diagnostic(.notABool(describe(expression, type), fix: fix), at: expression.range)
  }

  // MARK: Operators

  private func binary(
    _ left: ValueExpression, _ op: BinaryOperator, _ right: ValueExpression, operatorRange: SourceRange
  ) throws -> TypedExpression {
    let a = try check(left)
    let b = try check(right)
    let expression = RowExpression.binary(a.expression, op, b.expression)
    switch op {
    case .and, .or:
      try requireBool(a, left)
      try requireBool(b, right)
      return TypedExpression(expression: expression, type: .bool)
    case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
      try requireComparable(left, a, right, b, ordering: op.isOrdering)
      return try folded(
        TypedExpression(expression: expression, type: .bool),
        at: left.range.lowerBound..<right.range.upperBound)
    case .contains:
      switch a.type {
      case .text?:
        if let t = b.type, t != .text, t != .null {
          throw Diagnostic(
            .cannotCompare(
              left: describe(left, .text), right: describe(right, t),
              fix: .containsNeedsText(text(right.range))),
            at: right.range)
        }
      case .list?, nil, .null?:
        break
      case let type?:
        throw Diagnostic(
          .cannotCompare(
            left: describe(left, type), right: describe(right, b.type),
            fix: .containsLooksInTextOrList),
          at: left.range)
      }
      return try folded(
        TypedExpression(expression: expression, type: .bool),
        at: left.range.lowerBound..<right.range.upperBound)
    case .isIn:
      if let type = b.type, type != .list, type != .null {
        throw Diagnostic(.notAList(describe(right, type)), at: right.range)
      }
      if case .list(let items, _) = right {
        for item in items { try requireComparable(left, a, item, try check(item), ordering: false) }
      }
      return try folded(
        TypedExpression(expression: expression, type: .bool),
        at: left.range.lowerBound..<right.range.upperBound)
    case .add, .subtract, .multiply, .divide, .remainder:
      let type: ValueType?
      switch (a.type, b.type) {
      case (.null?, _), (_, .null?): type = .null
      case (let x?, let y?) where x.isNumber && y.isNumber:
        type = x == .int && y == .int && op != .divide ? .int : .double
      case (.text?, .text?) where op == .add: type = .text
      // Days added to a date (`day + 7`, `day - 1`), as DuckDB's date + integer.
      case (.date?, .int?) where op == .add || op == .subtract, (.int?, .date?) where op == .add: type = .date
      case (let x?, let y?):
        let fix: TypeFix? =
          if op == .add, x == .text || y == .text {
            .joinText(
              left: text(left.range), leftIsText: x == .text, right: text(right.range),
              rightIsText: y == .text)
          } else if x == .date, y == .date, op == .subtract {
            .daysBetween(from: text(right.range), to: text(left.range))
          } else if let marker = markerFix(left, x, y) ?? markerFix(right, y, x) {
            marker
          } else {
            nil
          }
        throw Diagnostic(
          .cannotCombine(operator: op.rawValue, left: describe(left, x), right: describe(right, y), fix: fix),
          at: operatorRange)
      default:
        // A side whose type is known only at run time.
        type = op == .divide ? .double : nil
      }
      return try folded(
        TypedExpression(expression: expression, type: type),
        at: left.range.lowerBound..<right.range.upperBound)
    }
  }

  /// Comparing values of unlike types is refused, with what would fix it.
  private func requireComparable(
    _ left: ValueExpression, _ a: TypedExpression, _ right: ValueExpression, _ b: TypedExpression,
    ordering: Bool
  ) throws {
    // A field that holds values of several types (a schemaless source) compared with one of
    // them: some items would silently compare false.
    for (field, other, otherExpression) in [(left, b.type, right), (right, a.type, left)] {
      guard let other, other != .null, let path = field.fieldPath,
        let profile = try? scope.field(path).profile, profile.type == nil, !profile.mixedTypes.isEmpty
      else { continue }
      let kinds = profile.mixedTypes.map(\.rawValue).joined(separator: " and ")
      let fix = mixedMarkerFix(profile, other) ?? .convertField(text(field.range), to: other)
      throw Diagnostic(
        .cannotCompare(
          left: "\(text(field.range)) (\(kinds))", right: describe(otherExpression, other), fix: fix),
        at: field.range)
    }
    guard let x = a.type, let y = b.type, x != .null, y != .null else { return }
    if x.isNumber && y.isNumber { return }
    if x == y {
      if ordering, x == .list || x == .record {
        throw Diagnostic(
          .cannotCompare(
            left: describe(left, x), right: describe(right, y),
            fix: .listsNeverLess), at: left.range)
      }
      return
    }
    let fix = markerFix(left, x, y) ?? markerFix(right, y, x) ?? conversionFix(left, x, right, y)
    throw Diagnostic(
      .cannotCompare(left: describe(left, x), right: describe(right, y), fix: fix), at: left.range)
  }

  /// For a text field that holds numbers (or dates) except a few markers, met by a number
  /// (or date): "its values are numbers except "NA": add null "NA" to read it as numbers".
  private func markerFix(_ expression: ValueExpression, _ type: ValueType, _ other: ValueType) -> TypeFix? {
    guard type == .text, let path = expression.fieldPath, let profile = try? scope.field(path).profile else {
      return nil
    }
    return mixedMarkerFix(profile, other)
  }

  /// For a field of numbers and a few texts: "its values are numbers except "NA": add …", with
  /// the advice of the load's note (a value written another way is not made null).
  private func mixedMarkerFix(_ profile: FieldProfile, _ other: ValueType) -> TypeFix? {
    guard let first = profile.markers.first,
      first.wouldBe == other || (first.wouldBe.isNumber && other.isNumber)
    else { return nil }
    let quoted = profile.markers.map { JSONWriter.quoted($0.text) }
    let kind = first.wouldBe.isNumber ? "numbers" : "\(first.wouldBe.rawValue)s"
    let advice =
      profile.markers.allSatisfy { SessionNotes.looksMissing($0.text) }
      ? "add null \(quoted.joined(separator: ", ")) to the \(scope.sourceKind?.rawValue ?? "source")"
      : SessionNotes.advice(for: profile.markers, fields: [profile.name], kind: kind)
    return .markers(kind: kind, texts: profile.markers.map(\.text), advice: advice)
  }

  /// A conversion that would make the two sides comparable.
  private func conversionFix(
    _ left: ValueExpression, _ x: ValueType, _ right: ValueExpression, _ y: ValueType
  )
    -> TypeFix?
  {
    func literalText(_ e: ValueExpression) -> String? {
      if case .literal(.string(let s), _) = e { return s }
      return nil
    }
    for (expression, type, other) in [(left, x, y), (right, y, x)] {
      if (other == .date || other == .timestamp), let text = literalText(expression) {
        return .writeAs(other, literal: text)
      }
      if type == .text, other.isNumber, let written = literalText(expression),
        let number = Self.number(written)
      {
        return .unquoteNumber(number)
      }
      if type == .text, other.isNumber {
        return .convertText(text(expression.range))
      }
    }
    return nil
  }

  /// `text` as dsh writes the number it holds (`"2007"`, `" 1.5 "`), or `nil` when it holds
  /// none.
  private static func number(_ text: String) -> String? {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    guard !trimmed.isEmpty, trimmed.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }),
      Double(trimmed) != nil
    else { return nil }
    return trimmed.hasPrefix("+") ? String(trimmed.dropFirst()) : trimmed
  }

  /// `body_mass_g (text)`, `6000 (int)`.
  func describe(_ expression: ValueExpression, _ type: ValueType?) -> String {
    var written = text(expression.range)
    if written.count > 40 { written = String(written.prefix(37)) + "…" }
    return written + (type.map { " (\($0.rawValue))" } ?? "")
  }

  // MARK: Functions

  private func call(_ name: CallName, _ arguments: [ValueExpression], range: SourceRange) throws
    -> TypedExpression
  {
    let function: ExpressionFunction
    switch name.callee {
    case .function(let named): function = named
    case .aggregate: throw Diagnostic(.aggregateOutsideGroup(name.name), at: name.range)
    case .window: throw Diagnostic(.windowOutsideExtend(name.name), at: name.range)
    case .unknown:
      throw Diagnostic(
        .unknownFunction(
          name.name,
          suggestion: suggestion(for: name.name, among: ExpressionFunction.allCases.map(\.rawValue))),
        at: name.range)
    }
    let checked = try arguments.map(check)
    switch function.resultType(checked.map(\.type)) {
    case .failure(.argumentCount):
      throw Diagnostic(.functionArgumentCount(name.name, signature: function.signature), at: range)
    case .failure(.argument(let index, let found)):
      var signature = function.signature
      // `age like "3%"`: a pattern tests text; a number or a date is matched as text(age).
      if index == 0, found != .text, found != .list, found != .record,
        [.like, .ilike, .startsWith, .endsWith, .matches].contains(function)
      {
        let written = text(arguments[0].range)
        signature += "; to match it as text: text(\(written))"
      }
      throw Diagnostic(
        .functionArgumentType(name.name, argument: describe(arguments[index], found), signature: signature),
        at: arguments[index].range)
    case .failure(.mixedResults(let a, let b)):
      throw Diagnostic(.functionMixedResults(name.name, a.rawValue, b.rawValue), at: range)
    case .success(let type):
      // A written regular expression that does not compile is a mistake in the script, not a
      // note for each row.
      if function == .matches, case .literal(.string(let pattern)) = checked[1].expression, !pattern.isEmpty,
        PatternCache.shared.regex(pattern) == nil
      {
        throw Diagnostic(.invalidRegularExpression(pattern), at: arguments[1].range)
      }
      let result = TypedExpression(expression: .call(function, checked.map(\.expression)), type: type)
      let value = try folded(result, at: range)
      // A constant that reads nothing (`date("May")`) is a mistake in the script: say so now.
      if case .literal(.null) = value.expression, function != .coalesce, function != .if,
        checked.contains(where: { $0.expression != .literal(.null) })
      {
        throw Diagnostic(
          .functionArgumentType(
            name.name, argument: describe(arguments[0], checked[0].type) + ", which reads as no value",
            signature: function.signature),
          at: range)
      }
      return value
    }
  }

  /// An expression of literals only, worked out now: `date("2020-01-01")` becomes a date a
  /// database can compare with.
  ///
  /// One whose value is null with a note (`9223372036854775807 + 1`, `1 / 0`,
  /// `round(9223372036854775807, -1)`) is an error at `range`, saying why, as DuckDB's binder
  /// refuses a constant that overflows: folded silently, it was a null in every row with no note.
  private func folded(_ typed: TypedExpression, at range: SourceRange) throws -> TypedExpression {
    guard typed.expression.operandsAreLiterals else { return typed }
    let notes = ExpressionNotes()
    let value = typed.expression.compiled(notes: notes)(.null)
    if let note = notes.take().first?.note {
      // The note's words without its count: "division by zero gave null".
      var why = note.text(count: 1)
      for count in [" (once)", " once"] where why.hasSuffix(count) { why.removeLast(count.count) }
      throw Diagnostic(.constantWithoutValue(text(range), why: why), at: range)
    }
    return TypedExpression(expression: .literal(value), type: typed.type == nil ? value.type : typed.type)
  }
}

extension Evaluator {
  /// The scope of a provider's items: its fields as checked by ``checkField(_:in:)``, typed
  /// from what the provider knows of them.
  func scope(of provider: ProviderValue) throws(DataSourceError) -> FieldScope {
    let profiles = try scans.profiles(of: provider.provider)
    let byName = Dictionary(profiles.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    // Items of known fields are records: no item is read (a database would count its rows to
    // read one, and a stage it runs itself needs no count).
    let plain =
      provider.provider.recordFields == nil
      ? Evaluator.plainItemType(of: provider.provider).flatMap(ValueType.init(rawValue:)) : nil
    return FieldScope(
      field: { path in
        try checkField(path, in: provider)
        guard let first = path.components.first else { return FieldInfo(type: plain, profile: nil) }
        guard var profile = byName[first] else { return FieldInfo(type: nil, profile: nil) }
        // A path into a record of known fields (a join's match) has their type.
        for name in path.components.dropFirst() {
          guard let next = profile.fields?.first(where: { $0.name == name }) else {
            return FieldInfo(type: nil, profile: nil)
          }
          profile = next
        }
        return FieldInfo(type: profile.type, profile: path.components.count == 1 ? profile : nil)
      }, sourceKind: provider.sourceKind)
  }

  /// A checker over a provider's items.
  func checker(for provider: ProviderValue) throws(DataSourceError) -> ExpressionChecker {
    ExpressionChecker(scope: try scope(of: provider), text: { self.text($0) })
  }
}

/// What the items of in-memory providers show of their fields, looked at once while nothing changes.
///
/// Every stage, template and edit checked against a large in-memory source would otherwise read
/// all of its items again. A session keeps its own.
@MainActor
final class ItemScans {
  private var entries: [ObjectIdentifier: (provider: Weak, epoch: UInt64, profiles: [FieldProfile])] = [:]
  /// What stages that add fields worked out over bases that know no types (see `profiles(of:)`).
  private var stageEntries: [ObjectIdentifier: (provider: Weak, epoch: UInt64, profiles: [FieldProfile])] =
    [:]

  private final class Weak {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
  }

  /// What is known of a provider's fields' types: what it says, else what its items show
  /// (read from memory; a lazy source is never read through for this).
  ///
  /// A check does not look at more than ``DerivedProvider/maximumItems`` items (a range of 9e18
  /// under an `extend` would be read for ever before a join refused it): past that the fields'
  /// types are not known, and the stages over them find them as they run. `describe`, which
  /// counts what it describes, looks at every item (`bounded` false; ^C stops it).
  func profiles(of provider: any DataProvider<Value>, bounded: Bool = true) throws(DataSourceError)
    -> [FieldProfile]
  {
    if let profiles = provider.fieldProfiles { return profiles }
    if provider is any ReadOnlyStore { return [] }
    // A stage keeps its base's fields and types: look at the base's items, once.
    if let derived = provider as? DerivedProvider<Value> {
      return try profiles(of: derived.rootProvider).map(\.withoutNullCount)
    }
    // A stage that adds fields: its base's, looked at, and its own fields' types; kept per
    // stage while its clock stands, so a chain of n stages is worked out in n steps, not n².
    if let stage = provider as? any FieldStage, stage.knowsItsFields {
      let key = ObjectIdentifier(provider)
      let epoch = provider.structureClock.current
      if let entry = stageEntries[key], entry.provider.object === provider, entry.epoch == epoch {
        return entry.profiles
      }
      let profiles = stage.profiles(over: try profiles(of: stage.profiledBase)) ?? []
      if stageEntries.count >= 16_384 { stageEntries.removeAll() }
      stageEntries[key] = (Weak(provider), epoch, profiles)
      return profiles
    }
    if bounded, SectionOffsets(of: provider).total > DerivedProvider<Value>.maximumItems { return [] }
    return try scanned(provider)
  }

  /// Whether ``profiles(of:bounded:)`` answers for `provider` without looking at items.
  ///
  /// It does when the provider, or the root or base its stages keep the fields of, says its
  /// types (or has none to say). A stage over such a provider can be checked before the stages under it have run.
  func knowsProfilesWithoutItems(of provider: any DataProvider<Value>) -> Bool {
    var current = provider
    while true {
      if current.fieldProfiles != nil || current is any ReadOnlyStore { return true }
      if (current as? any PlainValuesProviding)?.plainValuesType != nil { return true }
      if let derived = current as? DerivedProvider<Value> {
        current = derived.rootProvider
      } else if let stage = current as? any FieldStage, stage.knowsItsFields {
        current = stage.profiledBase
      } else {
        return false
      }
    }
  }

  private func scanned(_ provider: any DataProvider<Value>) throws(DataSourceError) -> [FieldProfile] {
    let key = ObjectIdentifier(provider)
    let epoch = provider.structureClock.current
    if let entry = entries[key], entry.provider.object === provider, entry.epoch == epoch {
      return entry.profiles
    }
    let profiles = try FieldProfiler.profiles(of: provider.allItems) ?? []
    if entries.count >= 64 { entries.removeAll() }
    entries[key] = (Weak(provider), epoch, profiles)
    return profiles
  }

  /// The profiles with every field's nulls counted, for the summary and `describe`: items in
  /// memory are looked at when the provider does not know its nulls (a filtered view); a lazy
  /// one keeps what it knows.
  func countedProfiles(of provider: any DataProvider<Value>) throws(DataSourceError) -> [FieldProfile] {
    let known = try profiles(of: provider, bounded: false)
    guard known.contains(where: { $0.nulls == nil }), !(provider is any ReadOnlyStore) else { return known }
    var counted = try scanned(provider)
    guard !counted.isEmpty else { return known }
    let markers = Dictionary(known.map { ($0.name, $0.markers) }, uniquingKeysWith: { a, _ in a })
    for index in counted.indices where counted[index].type == .text {
      counted[index].markers = markers[counted[index].name] ?? []
    }
    return counted
  }
}

extension DataProvider {
  /// Every item in order, read one at a time.
  var allItems: some Sequence<Item> {
    (0..<numberOfSections).lazy.flatMap { section in
      (0..<self.numberOfItems(inSection: section)).lazy.map {
        self.item(at: ItemPath(item: $0, section: section))
      }
    }
  }
}
