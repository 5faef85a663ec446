import DataSourceKit

/// A provider that knows its fields' types and nulls without reading its items (a typed file, a
/// database table), or a stage that hands on what its source knows.
package protocol FieldProfiling: AnyObject {
  /// What the provider knows of its fields' types and nulls without reading its items, or `nil`
  /// (then a caller may look at the items).
  var fieldProfiles: [FieldProfile]? { get }
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
