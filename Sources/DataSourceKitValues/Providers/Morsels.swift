// A large file is read, checked and split into rows a part on each core, as DuckDB splits a
// scan into morsels: the number of parts follows the machine (two on the CI's box, eight on a
// laptop), each part at least a size below which a thread costs more than it saves.
import DataSourceKit
import Foundation

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

  /// Whether the part running on this thread should stop: its task cancelled, or the
  /// interruption ``run(parts:_:)`` gave it (or the statement's) set.
  package static var partStopped: Bool {
    Task.isCancelled || ReadInterruption.current?.isInterrupted == true
  }
}
