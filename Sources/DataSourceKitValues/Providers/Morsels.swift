// A large file is read, checked and split into rows a part on each core, as DuckDB splits a
// scan into morsels: the number of parts follows the machine (two on the CI's box, eight on a
// laptop), each part at least a size below which a thread costs more than it saves.
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
}
