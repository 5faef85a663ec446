// Working with `Value` items, the records CSV, JSON and SQLite providers give: reading a field,
// comparing as a query language compares, and the stages that order and group by a value. These
// are what `show … as swift` writes, so a program built on them gives dsh's answers.

extension Value {
  /// The field `name` of a record, or `null` when the value is not a record or has no such
  /// field, so paths chain: `item["address"]["city"]`.
  public subscript(field: String) -> Value {
    value(atPath: [field]) ?? .null
  }

  /// Whether `lhs` sorts before `rhs`, as `where a < b` compares.
  ///
  /// Numbers compare by value, text by code point. A comparison with `null`, or of values of kinds that have no order between them
  /// (text and a number), is false.
  public static func < (lhs: Value, rhs: Value) -> Bool {
    isOrderable(lhs, rhs) && compare(lhs, rhs) == .orderedAscending
  }

  /// Whether `lhs` sorts after `rhs`; a comparison with `null` is false, as in SQL.
  public static func > (lhs: Value, rhs: Value) -> Bool {
    isOrderable(lhs, rhs) && compare(lhs, rhs) == .orderedDescending
  }

  /// Whether `lhs` sorts before or with `rhs`; a comparison with `null` is false, as in SQL.
  public static func <= (lhs: Value, rhs: Value) -> Bool {
    isOrderable(lhs, rhs) && compare(lhs, rhs) != .orderedDescending
  }

  /// Whether `lhs` sorts after or with `rhs`; a comparison with `null` is false, as in SQL.
  public static func >= (lhs: Value, rhs: Value) -> Bool {
    isOrderable(lhs, rhs) && compare(lhs, rhs) != .orderedAscending
  }

  /// Whether two values are both present and differ, as `where a != b` tests (under `!=`,
  /// `null` differs from every value but `null`).
  public func differs(from other: Value) -> Bool {
    !isNull && !other.isNull && self != other
  }

  /// Whether two values are both present and equal, as `where a == b` tests (under `==`,
  /// `null == null`).
  public func matches(_ other: Value) -> Bool {
    !isNull && !other.isNull && self == other
  }

  /// Whether text holds `needle` (by code points, as SQLite's `instr`), or a list holds a value
  /// equal to it, as `where a contains b` tests.
  public func contains(_ needle: Value) -> Bool {
    switch (self, needle) {
    case (.string(let haystack), .string(let needle)):
      needle.isEmpty || haystack.range(of: needle, options: .literal) != nil
    case (.list(let items), let needle) where !needle.isNull: items.contains(needle)
    default: false
    }
  }

  /// Whether the value is present and equal to an item of `list`, as `where a in [1, 2]` tests.
  public func isIn(_ list: Value) -> Bool {
    guard case .list(let items) = list else { return false }
    return !isNull && items.contains(self)
  }
}

extension DerivedProvider where Item == Value {
  /// Sorts the items of each section by a value of each, as `sort by` does: numbers by value,
  /// text by code point, `null` last in either direction; equal keys keep their order.
  ///
  /// ```swift
  /// let byName = DerivedProvider.sorted(people) { $0["name"] }
  /// ```
  ///
  /// - Parameter label: how `describe` names the stage; defaults to "sort".
  /// - Complexity: O(n log n) comparisons of keys on load.
  public static func sorted(
    _ base: any DataProvider<Value>, label: String? = nil, direction: SortDirection = .ascending,
    by key: @escaping (Value) -> Value
  ) -> DerivedProvider {
    sorted(base, label: label ?? "sort", sortKey: key) { a, b in
      if a.isNull || b.isNull { return !a.isNull && b.isNull }
      return Value.compare(a, b) == (direction == .ascending ? .orderedAscending : .orderedDescending)
    }
  }

  /// Groups the items into sections by a value of each, as `section by` does: sections in key
  /// order (a `null` key is a section of its own, last), items in their order inside each.
  ///
  /// ```swift
  /// let byTeam = DerivedProvider.sectioned(people) { $0["team"] }
  /// ```
  ///
  /// - Parameter label: how `describe` names the stage; defaults to "section".
  /// - Complexity: O(n) key computations plus O(k log k) for k distinct keys, on load.
  public static func sectioned(
    _ base: any DataProvider<Value>, label: String? = nil, direction: SortDirection = .ascending,
    by key: @escaping (Value) -> Value
  ) -> DerivedProvider {
    sectioned(base, label: label ?? "section", direction: direction, key: key)
  }
}

// MARK: - Arithmetic and records

extension Value {
  /// The sum, as `extend total = a + b` computes it: ints stay ints (an overflow is `null`), an
  /// int and a double make a double, text joins text, and `null` in either gives `null`.
  public static func + (lhs: Value, rhs: Value) -> Value { Arithmetic.apply(.add, lhs, rhs, notes: nil) }

  /// The difference, as `-` computes it in dsh (an overflow is `null`; `null` gives `null`).
  public static func - (lhs: Value, rhs: Value) -> Value { Arithmetic.apply(.subtract, lhs, rhs, notes: nil) }

  /// The product, as `*` computes it in dsh (an overflow is `null`; `null` gives `null`).
  public static func * (lhs: Value, rhs: Value) -> Value { Arithmetic.apply(.multiply, lhs, rhs, notes: nil) }

  /// The quotient, as `/` computes it in dsh: ints divide to an int, rounded toward zero, and a
  /// division by zero is `null`.
  public static func / (lhs: Value, rhs: Value) -> Value { Arithmetic.apply(.divide, lhs, rhs, notes: nil) }

  /// The remainder, as `%` computes it in dsh (by zero, `null`).
  public static func % (lhs: Value, rhs: Value) -> Value {
    Arithmetic.apply(.remainder, lhs, rhs, notes: nil)
  }

  /// The record with `fields` set, as `extend` sets them.
  ///
  /// A field it has keeps its place and takes the new value; the others are added at the end. A value that is not a record becomes a
  /// record of `fields`.
  public func extended(with fields: [(String, Value)]) -> Value {
    var pairs: [(String, Value)] = []
    if case .record(let record) = self { pairs = record.fields.map { ($0.name, $0.value) } }
    for (name, value) in fields {
      if let index = pairs.firstIndex(where: { $0.0 == name }) {
        pairs[index].1 = value
      } else {
        pairs.append((name, value))
      }
    }
    return .record(Record(pairs))
  }
}
