import Synchronization

/// A counter that moves whenever any provider's shape may have changed: a load state, an edit, a
/// notification, a segment switched.
///
/// Composed data sources cache where each child's sections start and trust the cache while the
/// counter has not moved, so a view of thousands of children costs O(1) a lookup instead of a
/// walk over the children. Debug builds check every cached answer against a fresh count.
package enum StructureEpoch {
  private static let counter = Atomic<UInt64>(0)

  package static var current: UInt64 { counter.load(ordering: .acquiring) }

  /// Called by whatever changes a provider's sections or counts.
  package static func advance() { counter.add(1, ordering: .releasing) }
}
