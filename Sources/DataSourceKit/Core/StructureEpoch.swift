import Synchronization

/// A counter that moves whenever any provider's shape may have changed: a load state, an edit, a
/// notification, a segment switched.
///
/// Composed data sources cache where each child's sections start and trust the cache while the
/// counter has not moved, so a view of thousands of children costs O(1) a lookup instead of a
/// walk over the children. Debug builds check every cached answer against a fresh count.
///
/// Stages keep their fields' profiles the same way (`ProfilesMemo`), worked out again only
/// when the counter has moved.
///
/// A provider or data source of the app's own must move it whenever its number of sections or
/// rows, or what it says of its fields (``DataProvider/fieldProfiles``), changes:
/// ``ObserverList/notify()`` does (tell the observers with it), or call ``advance()`` directly.
public enum StructureEpoch {
  private static let counter = Atomic<UInt64>(0)

  /// The counter now.
  public static var current: UInt64 { counter.load(ordering: .acquiring) }

  /// Says that some provider's sections, counts or field profiles changed.
  public static func advance() { counter.add(1, ordering: .releasing) }
}
