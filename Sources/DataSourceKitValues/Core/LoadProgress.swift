import DataSourceKit
import Synchronization

/// How far a running load has got: rows parsed and bytes read, for a progress line.
///
/// The caller makes one and hands it to the providers it builds (`CSVProvider(…, progress:)`);
/// the loads add to it from whatever thread they run on, and a progress display reads it while
/// they run. Two sessions keep two of these, so neither sees the other's work.
///
/// Stopping is not here: a load stops when its `Task` is cancelled (`Task.isCancelled` between
/// chunks, `withTaskCancellationHandler` around blocking calls).
public final class LoadProgress: Sendable {
  private let rowCount = Atomic<Int>(0)
  private let byteCount = Atomic<Int>(0)
  private let pageCount = Atomic<Int>(0)

  /// A progress at zero.
  public init() {}

  /// Starts counting again, before a new statement.
  public func reset() {
    rowCount.store(0, ordering: .relaxed)
    byteCount.store(0, ordering: .relaxed)
    pageCount.store(0, ordering: .relaxed)
  }

  /// Counts rows, bytes and pages read (from any thread).
  public func add(rows: Int = 0, bytes: Int = 0, pages: Int = 0) {
    if rows != 0 { rowCount.add(rows, ordering: .relaxed) }
    if bytes != 0 { byteCount.add(bytes, ordering: .relaxed) }
    if pages != 0 { pageCount.add(pages, ordering: .relaxed) }
  }

  /// Rows read so far.
  public var rows: Int { rowCount.load(ordering: .relaxed) }
  /// Bytes read so far.
  public var bytes: Int { byteCount.load(ordering: .relaxed) }
  /// Pages (HTTP responses) fetched.
  public var pages: Int { pageCount.load(ordering: .relaxed) }
}
