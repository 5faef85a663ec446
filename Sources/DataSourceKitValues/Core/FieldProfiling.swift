import DataSourceKit

/// A provider that knows its fields' types and nulls without reading its items (a typed file, a
/// database table), or a stage that hands on what its source knows.
package protocol FieldProfiling: AnyObject {
  /// What the provider knows of its fields' types and nulls without reading its items, or `nil`
  /// (then a caller may look at the items).
  var fieldProfiles: [FieldProfile]? { get }
}

/// A provider whose items are plain values of a type known without reading them (`distinct x`,
/// which gives the values of `x`): a field of them is refused, and the stages over it checked,
/// before it runs.
package protocol PlainValuesProviding: AnyObject {
  /// The type of every item that is not null, or `nil` when it is not known without them.
  var plainValuesType: ValueType? { get }
}

/// A stage that adds fields to its base's (`extend`, window functions, `join`): its profiles are
/// its base's, whatever way they were found, with its own fields' types beside them.
///
/// Its ``FieldProfiling/fieldProfiles`` are nil while its base knows nothing; a check then works
/// out the base's from the base's items and asks ``profiles(over:)``, never reading this stage's
/// items (which would run its expressions, and count their notes, once more).
package protocol FieldStage: FieldProfiling {
  /// The provider whose fields this stage keeps.
  var profiledBase: any DataProvider<Value> { get }
  /// Whether the stage knows its fields without reading its items (not over plain values).
  var knowsItsFields: Bool { get }
  /// This stage's profiles, given its base's; `nil` when it does not know its own fields (over
  /// plain values): then its items are looked at.
  func profiles(over baseProfiles: [FieldProfile]) -> [FieldProfile]?
}

/// Where a field of a stage that adds fields comes from: the base's field it copies, or the
/// stage's own computed field at an index.
package enum FieldOrigin: Sendable {
  case base(String)
  case computed(Int)
}

extension FieldStage {
  /// A stage's profiles over its base's: for each field (`names`, from `origins`), the base's
  /// profile of the field it keeps (its nulls no longer known), else the type it computes.
  package func stageProfiles(
    names: some Sequence<String>, origins: [FieldOrigin], computedType: (Int) -> ValueType?,
    over baseProfiles: [FieldProfile]
  ) -> [FieldProfile] {
    let byName = Dictionary(
      baseProfiles.map { ($0.name, $0.withoutNullCount) }, uniquingKeysWith: { a, _ in a })
    return zip(names, origins).map { name, origin in
      switch origin {
      case .base(let field): byName[field] ?? FieldProfile(name: name, type: nil, nulls: nil)
      case .computed(let index): FieldProfile(name: name, type: computedType(index), nulls: nil)
      }
    }
  }
}

extension DataProvider {
  /// What the provider knows of its fields' types and nulls without reading its items, or `nil`
  /// when it knows nothing (it is not ``FieldProfiling``).
  package var fieldProfiles: [FieldProfile]? { (self as? any FieldProfiling)?.fieldProfiles }
}

extension DerivedProvider: FieldProfiling {
  /// The root's types; how many of this provider's items are null is not kept.
  package var fieldProfiles: [FieldProfile]? {
    profilesMemo.value(at: structureClock, of: { rootProvider.fieldProfiles }) {
      $0?.map { $0.withoutNullCount }
    }
  }
}

extension EditableProvider: FieldProfiling {
  /// The source's; after an edit its nulls are no longer known (edits keep each field's type).
  package var fieldProfiles: [FieldProfile]? {
    guard let profiles = source.fieldProfiles else { return nil }
    return isEdited ? profiles.map { $0.withoutNullCount } : profiles
  }
}
