/// What the shell knows of a provider of its records beyond counts and items: the fields every
/// item has, the field that identifies one, and how many stages an item is read through.
///
/// An app's provider need not say any of it (its items are its own type, identified as they
/// identify themselves); the shell's providers and the stages over them do. Ask an arbitrary
/// provider through ``DataProvider/recordFields``, ``DataProvider/recordIdentityKey`` and
/// ``DataProvider/recordStageDepth``.
package protocol RecordProviding: AnyObject {
  /// The fields every item is known to have, in order, or `nil` for a schemaless source.
  var knownFields: [String]? { get }

  /// The field that identifies an item (for diffing), or `nil` when the whole item does.
  var identityKey: String? { get }

  /// How many stages an item is read through here: 1 for a source, one more than the base's
  /// for a stage that reads its items from the base as they are asked for.
  ///
  /// Reading an item goes down through every stage, one call inside the other, so a program
  /// bounds it (dsh refuses more than 5,000).
  var stageDepth: Int { get }
}

extension RecordProviding {
  /// None known.
  package var knownFields: [String]? { nil }
  /// The whole item identifies it.
  package var identityKey: String? { nil }
  /// A source: one.
  package var stageDepth: Int { 1 }
}

extension DataProvider {
  /// The fields every item is known to have, or `nil`: none for a provider that is not
  /// ``RecordProviding``.
  package var recordFields: [String]? { (self as? any RecordProviding)?.knownFields }

  /// The field that identifies an item, or `nil` when the whole item does.
  package var recordIdentityKey: String? { (self as? any RecordProviding)?.identityKey }

  /// How many stages an item is read through: one for a provider that is not
  /// ``RecordProviding``.
  package var recordStageDepth: Int { (self as? any RecordProviding)?.stageDepth ?? 1 }
}
