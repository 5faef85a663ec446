import Foundation

/// What identifies a section: the key its items were grouped by, of the app's own type.
///
/// A provider sectioned with `DerivedProvider.sectioned(_:label:direction:by:)` keeps the
/// key its closure returned (a `String`, an enum, a date…), and every layer above hands it back
/// unchanged: ``SectionedDataSource/sectionKey(_:)``, ``SectionContext/key`` in a header's
/// closure, and the section identifiers of a ``DataSourceSnapshot``. Read it back as the type
/// it was made from with ``value(as:)``:
///
/// ```swift
/// let city = context.key?.value(as: String.self)
/// ```
///
/// Keys are `Sendable`, so snapshots that hold them can be diffed on a background task. Two keys
/// are equal when their values are equal as `AnyHashable`s are (so `SectionKey(1)` equals
/// `SectionKey(1.0)`, though only the first reads back `as: Int.self`). Keys of one `Comparable`
/// type order by that type; this is how ``DerivedProvider`` orders its sections.
public struct SectionKey: Hashable, Sendable, CustomStringConvertible {
  /// The key as given, or a shell value (the shell's items and keys are ``Value``s; keeping them
  /// apart from the boxed case keeps its grouping free of boxing).
  enum Storage: Sendable {
    case value(Value)
    case custom(any Hashable & Sendable, order: (@Sendable (any Hashable & Sendable) -> Bool?)?)
  }

  let storage: Storage

  /// A key of the app's own type that has no order of its own, for a data source of the app's
  /// own that groups its items itself (the stages of ``DerivedProvider`` take `Comparable` keys).
  public init(unordered key: some Hashable & Sendable) {
    if let value = key as? Value {
      storage = .value(value)
    } else {
      storage = .custom(key, order: nil)
    }
  }

  /// A key of the app's own type, ordered by its type's `<`.
  public init<Key: Hashable & Sendable & Comparable>(_ key: Key) {
    if let value = key as? Value {
      storage = .value(value)
      return
    }
    storage = .custom(
      key,
      order: { other in
        guard let other = other as? Key else { return nil }
        return key < other
      })
  }

  /// A shell value as a key.
  package init(value: Value) { storage = .value(value) }

  /// The key as the type it was made from, or `nil` when it is of another type.
  public func value<Key>(as type: Key.Type) -> Key? {
    switch storage {
    case .value(let value): value as? Key
    case .custom(let key, _): key as? Key
    }
  }

  /// The key as it was made, type-erased.
  public var base: any Hashable & Sendable {
    switch storage {
    case .value(let value): value
    case .custom(let key, _): key
    }
  }

  /// The shell's value of the key, when the key is one.
  package var shellValue: Value? {
    if case .value(let value) = storage { return value }
    return nil
  }

  /// The key as a shell value: its value when it is one, else its description as text.
  package var asValue: Value { shellValue ?? .string(description) }

  /// True for the shell's null key (items whose grouping field is null, a section shown last).
  package var isNull: Bool { shellValue?.isNull ?? false }

  /// A description for people.
  public var description: String {
    switch storage {
    case .value(let value): value.description
    case .custom(let key, _): String(describing: key)
    }
  }

  /// Whether two values are the same.
  public static func == (lhs: SectionKey, rhs: SectionKey) -> Bool {
    switch (lhs.storage, rhs.storage) {
    case (.value(let a), .value(let b)): a == b
    case (.custom(let a, _), .custom(let b, _)): AnyHashable(a) == AnyHashable(b)
    default: false
    }
  }

  /// Hashes the essential components.
  public func hash(into hasher: inout Hasher) {
    switch storage {
    case .value(let value): value.hash(into: &hasher)
    case .custom(let key, _): AnyHashable(key).hash(into: &hasher)
    }
  }

  /// How two keys order: shell values by ``Value/compare(_:_:)``, keys of one `Comparable` type by
  /// `<`, anything else as equal (the sections keep the order they were found in).
  package static func compare(_ lhs: SectionKey, _ rhs: SectionKey) -> ComparisonResult {
    switch (lhs.storage, rhs.storage) {
    case (.value(let a), .value(let b)):
      return Value.compare(a, b)
    case (.custom(let a, let aFirst), .custom(let b, _)):
      guard let aFirst, let less = aFirst(b) else { return .orderedSame }
      if less { return .orderedAscending }
      return AnyHashable(a) == AnyHashable(b) ? .orderedSame : .orderedDescending
    default:
      return .orderedSame
    }
  }
}

extension SectionKey {
  /// The shell's null key.
  package static let null = SectionKey(value: .null)
}
