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
  /// The key as given: one of a type that orders itself (the shell's values, kept apart from
  /// the general case so that grouping by them needs no order closure per key), or any other.
  enum Storage: Sendable {
    case selfOrdering(any SelfOrderingKey)
    case custom(any Hashable & Sendable, order: (@Sendable (any Hashable & Sendable) -> Bool?)?)
  }

  /// The key and its hash, in one object made once: a section's key is copied into every
  /// snapshot and compared at every apply, and a copy is then one reference, an equal key is
  /// most often the same object, and unequal keys mostly differ in their hashes, without
  /// boxing either as an `AnyHashable` again (750 ns a comparison, 3,000 sections a snapshot).
  private final class Box: Sendable {
    let storage: Storage
    let hash: Int
    /// Whether this is the null key, worked out once: a stage halving 3,000 sections asks it of
    /// each key it passes.
    let isNull: Bool
    /// The key, when it is an `Int` (an app's most common key): two such keys order as ints,
    /// without their order closure casting the other key at each comparison.
    let integer: Int?

    init(_ storage: Storage, integer: Int? = nil) {
      self.storage = storage
      self.integer = integer
      switch storage {
      case .selfOrdering(let key):
        hash = key.hashValue
        isNull = key.isNullKey
      case .custom(let key, _):
        hash = AnyHashable(key).hashValue
        isNull = false
      }
    }
  }

  private let box: Box
  var storage: Storage { box.storage }

  /// A key of the app's own type that has no order of its own, for a data source of the app's
  /// own that groups its items itself (the stages of ``DerivedProvider`` take `Comparable` keys).
  public init(unordered key: some Hashable & Sendable) {
    if let key = key as? any SelfOrderingKey {
      box = Box(.selfOrdering(key))
    } else {
      box = Box(.custom(key, order: nil))
    }
  }

  /// A key of the app's own type, ordered by its type's `<`.
  public init<Key: Hashable & Sendable & Comparable>(_ key: Key) {
    if let key = key as? any SelfOrderingKey {
      box = Box(.selfOrdering(key))
      return
    }
    box = Box(
      .custom(
        key,
        order: { other in
          guard let other = other as? Key else { return nil }
          return key < other
        }),
      integer: key as? Int)
  }

  /// A key of a type that orders itself.
  package init(selfOrdering key: some SelfOrderingKey) { box = Box(.selfOrdering(key)) }

  /// The key as the type it was made from, or `nil` when it is of another type.
  public func value<Key>(as type: Key.Type) -> Key? {
    switch storage {
    case .selfOrdering(let key): key as? Key
    case .custom(let key, _): key as? Key
    }
  }

  /// The key as it was made, type-erased.
  public var base: any Hashable & Sendable {
    switch storage {
    case .selfOrdering(let key): key
    case .custom(let key, _): key
    }
  }

  /// The key, when it is of a type that orders itself.
  package var selfOrderingBase: (any SelfOrderingKey)? {
    if case .selfOrdering(let key) = storage { return key }
    return nil
  }

  /// True for a null key (the shell's items whose grouping field is null, a section shown last).
  package var isNull: Bool { box.isNull }

  /// A description for people.
  public var description: String {
    switch storage {
    case .selfOrdering(let key): key.description
    case .custom(let key, _): String(describing: key)
    }
  }

  /// Whether two values are the same.
  public static func == (lhs: SectionKey, rhs: SectionKey) -> Bool {
    if lhs.box === rhs.box { return true }
    if let a = lhs.box.integer, let b = rhs.box.integer { return a == b }
    if lhs.box.hash != rhs.box.hash { return false }
    return switch (lhs.storage, rhs.storage) {
    case (.selfOrdering(let a), .selfOrdering(let b)): a.isEqual(to: b)
    case (.custom(let a, _), .custom(let b, _)): AnyHashable(a) == AnyHashable(b)
    default: false
    }
  }

  /// Hashes the essential components.
  public func hash(into hasher: inout Hasher) { hasher.combine(box.hash) }

  /// How two keys order: keys that order themselves by their own rule, keys of one `Comparable`
  /// type by `<`, anything else as equal (the sections keep the order they were found in).
  package static func compare(_ lhs: SectionKey, _ rhs: SectionKey) -> ComparisonResult {
    if lhs.box === rhs.box { return .orderedSame }
    if let a = lhs.box.integer, let b = rhs.box.integer {
      return a < b ? .orderedAscending : a == b ? .orderedSame : .orderedDescending
    }
    switch (lhs.storage, rhs.storage) {
    case (.selfOrdering(let a), .selfOrdering(let b)):
      return a.compare(to: b)
    case (.custom, .custom(let b, _)):
      guard case .custom(_, let aFirst) = lhs.storage, let aFirst, let less = aFirst(b) else {
        return .orderedSame
      }
      if less { return .orderedAscending }
      // Keys of other hashes differ: no need to box both to tell.
      return lhs == rhs ? .orderedSame : .orderedDescending
    default:
      return .orderedSame
    }
  }
}

/// A key type of the package's own that orders itself and may be null: the shell's values,
/// whose order (numbers before text, null last) is not a `Comparable` conformance.
package protocol SelfOrderingKey: Hashable, Sendable, CustomStringConvertible {
  /// How two keys of the type order.
  static func compareKeys(_ lhs: Self, _ rhs: Self) -> ComparisonResult
  /// Whether this is the null key, whose section goes last.
  var isNullKey: Bool { get }
}

extension SelfOrderingKey {
  /// Whether `other` is this key, of the same type.
  fileprivate func isEqual(to other: any SelfOrderingKey) -> Bool {
    guard let other = other as? Self else { return false }
    return self == other
  }

  /// The order of this key and `other`; keys of other types are as equal.
  fileprivate func compare(to other: any SelfOrderingKey) -> ComparisonResult {
    guard let other = other as? Self else { return .orderedSame }
    return Self.compareKeys(self, other)
  }
}
