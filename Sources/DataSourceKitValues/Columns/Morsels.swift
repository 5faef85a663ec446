// A large file is read, checked and split into rows a part on each core, as DuckDB splits a
// scan into morsels: the number of parts follows the machine (two on the CI's box, eight on a
// laptop), each part at least a size below which a thread costs more than it saves.
import DataSourceKit
import Foundation
import Synchronization

/// How a pass over a large buffer is split across the machine's cores.
package enum Morsels {
  /// The cores a pass may use, when set for a task (a test of eight parts on two cores).
  @TaskLocal package static var coresForTask: Int?

  /// `DSH_THREADS`, when the process was started with it: a pass on fewer cores than the
  /// machine has, to measure how a load scales.
  private static let coresFromEnvironment: Int? = ProcessInfo.processInfo.environment["DSH_THREADS"]
    .flatMap { Int($0) }.map { max(1, $0) }

  /// The machine's active processors, asked once: Foundation reads the cgroup's quota and CPU
  /// set from files each time it is asked.
  private static let machineCores = ProcessInfo.processInfo.activeProcessorCount

  /// The cores a pass uses: the machine's active processors, unless set otherwise.
  package static var cores: Int { coresForTask ?? coresFromEnvironment ?? machineCores }

  /// How many parts a pass over `count` bytes is split into: one per core, each at least
  /// `minimum` bytes (one when the buffer is smaller than two of them).
  package static func parts(of count: Int, minimum: Int) -> Int {
    max(1, min(cores, count / max(minimum, 1), 64))
  }

  /// Where each of `parts` even parts of `count` starts, then `count`: `parts + 1` offsets.
  package static func evenBoundaries(of count: Int, parts: Int) -> [Int] {
    (0...parts).map { count / parts * $0 + min($0, count % parts) }
  }

  /// Runs `body` for each part `0..<parts` at once: the first on the calling thread, the
  /// others on the global queue; returns when every part is done.
  ///
  /// ^C stops every part: the parts run on threads outside the task, which see neither its
  /// cancellation nor its statement's ``ReadInterruption`` by themselves. So each part is given
  /// an interruption as its ``ReadInterruption/current`` (a regular expression's match and a
  /// sort's passes look there): the calling thread's part the statement's own, the others one
  /// of the pass's, which the calling thread, its own part done, sets when the task is
  /// cancelled or the statement interrupted.
  ///
  /// - Throws: ``DataSourceError/cancelled`` when the task was cancelled or the statement
  ///   interrupted: then some parts may have stopped short.
  package static func run(parts: Int, _ body: @escaping @Sendable (_ part: Int) -> Void) throws {
    let statement = ReadInterruption.current
    let stop = ReadInterruption()
    func stopped() -> Bool { Task.isCancelled || statement?.isInterrupted == true }
    let group = DispatchGroup()
    for part in 1..<max(parts, 1) {
      DispatchQueue.global().async(group: group) { ReadInterruption.$current.withValue(stop) { body(part) } }
    }
    if stopped() { stop.interruptAll() }
    if parts > 0 { ReadInterruption.$current.withValue(statement ?? stop) { body(0) } }
    while group.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
      if stopped() { stop.interruptAll() }
    }
    if stopped() || stop.isInterrupted { throw DataSourceError.cancelled }
  }

  /// Runs `body` for each index `0..<count` on every core, the calling thread's too.
  ///
  /// Each core takes the next index not yet taken (blocks of uneven cost keep every core busy);
  /// returns when every index taken is done. ^C stops the cores as ``run(parts:_:)`` does.
  ///
  /// - Throws: ``DataSourceError/cancelled`` when the task was cancelled or the statement
  ///   interrupted: then some indices may not have been run.
  package static func each(_ count: Int, _ body: @escaping @Sendable (_ index: Int) -> Void) throws {
    let taken = IndexCounter()
    try run(parts: min(cores, count)) { _ in
      while !partStopped {
        let index = taken.next()
        guard index < count else { return }
        body(index)
      }
    }
  }

  /// Makes `count` things on the global queue, at most `ahead` of them beyond the one in use,
  /// and hands each to `use` in order on the calling thread: a file's next blocks decoded on the
  /// other cores while the calling thread uses the one before.
  ///
  /// ^C stops the making as ``run(parts:_:)`` does; whatever was begun is waited for before
  /// this returns or throws.
  ///
  /// - Throws: what `make` or `use` threw first, or ``DataSourceError/cancelled`` when the task
  ///   was cancelled or the statement interrupted.
  package static func inOrder<T: Sendable>(
    count: Int, ahead: Int, make: @escaping @Sendable (Int) throws(DataSourceError) -> T,
    use: (T) throws -> Void
  ) throws {
    let statement = ReadInterruption.current
    let stop = ReadInterruption()
    func stopped() -> Bool { Task.isCancelled || statement?.isInterrupted == true }
    let made = SlotArray<Result<T, DataSourceError>>(count: count)
    let ready = (0..<count).map { _ in DispatchSemaphore(value: 0) }
    let group = DispatchGroup()
    var launched = 0
    defer {
      // Nothing begun outlives the call (its slots and the file it reads).
      if launched < count { stop.interruptAll() }
      group.wait()
    }
    for index in 0..<count {
      while launched < min(count, index + 1 + max(ahead, 1)), !stop.isInterrupted {
        let next = launched
        launched += 1
        DispatchQueue.global().async(group: group) {
          ReadInterruption.$current.withValue(stop) {
            made[next] = stop.isInterrupted ? nil : Result { () throws(DataSourceError) in try make(next) }
          }
          ready[next].signal()
        }
      }
      while ready[index].wait(timeout: .now() + .milliseconds(20)) == .timedOut {
        if stopped() { stop.interruptAll() }
      }
      guard !stopped(), let result = made[index] else { throw DataSourceError.cancelled }
      made[index] = nil
      try use(try result.get())
    }
  }

  /// Whether the part running on this thread should stop: its task cancelled, or the
  /// interruption ``run(parts:_:)`` gave it (or the statement's) set.
  package static var partStopped: Bool {
    Task.isCancelled || ReadInterruption.current?.isInterrupted == true
  }
}

/// The next index of ``Morsels/each(_:_:)`` for any core to take.
private final class IndexCounter: Sendable {
  private let taken = Atomic<Int>(0)
  func next() -> Int { taken.add(1, ordering: .relaxed).oldValue }
}
