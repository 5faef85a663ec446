import Synchronization

/// The user asked to stop (^C while a statement runs): long work checks this and gives up,
/// leaving what it was changing as it was.
public enum Interruption {
  private static let requested = Atomic<Bool>(false)

  /// Asks running work to stop.
  ///
  /// Safe to call from a signal handler (one atomic store).
  public static func request() { requested.store(true, ordering: .relaxed) }

  /// Clears the request, before a statement starts.
  public static func reset() { requested.store(false, ordering: .relaxed) }

  public static var isRequested: Bool { requested.load(ordering: .relaxed) }
}

/// How far the running load has got, for the progress line a terminal shows.
public enum LoadProgress {
  private static let rowCount = Atomic<Int>(0)
  private static let byteCount = Atomic<Int>(0)

  public static func reset() {
    rowCount.store(0, ordering: .relaxed)
    byteCount.store(0, ordering: .relaxed)
  }

  public static func add(rows: Int = 0, bytes: Int = 0) {
    if rows != 0 { rowCount.add(rows, ordering: .relaxed) }
    if bytes != 0 { byteCount.add(bytes, ordering: .relaxed) }
  }

  public static var rows: Int { rowCount.load(ordering: .relaxed) }
  public static var bytes: Int { byteCount.load(ordering: .relaxed) }
}
