import DataSourceKit
import Synchronization

/// What stops the blocking reads of the statement running now when the user interrupts it.
///
/// A provider answers a view synchronously (a count, a page, a sort before the first row), deep
/// under calls that know nothing of tasks, so no cancellation handler of its own can be in
/// place. Instead the statement's task carries one of these (``current``, a task-local) and
/// cancels it with the task; each blocking call registers what interrupts it while it runs
/// (``interruptibly(_:_:)``), from any depth and on any thread it hands the work to.
package final class ReadInterruption: Sendable {
  /// The interruption of the statement this task runs, if it runs one.
  @TaskLocal package static var current: ReadInterruption?

  private let state = Mutex<(interrupts: [Int: @Sendable () -> Void], next: Int, interrupted: Bool)>(
    ([:], 0, false))

  package init() {}

  /// Whether the statement was interrupted: work that cannot register an interrupt (a regular
  /// expression's match) looks here as it goes.
  package var isInterrupted: Bool { state.withLock { $0.interrupted } }

  /// Runs `body` with `interrupt` registered: called from the cancelling thread while `body`
  /// blocks.
  ///
  /// - Throws: ``DataSourceError/cancelled`` without running `body` once the statement was
  ///   interrupted; else what `body` throws.
  package func during<R>(_ interrupt: @escaping @Sendable () -> Void, _ body: () throws -> R) throws -> R {
    let registration = state.withLock { state -> Int? in
      guard !state.interrupted else { return nil }
      state.next += 1
      state.interrupts[state.next] = interrupt
      return state.next
    }
    guard let registration else { throw DataSourceError.cancelled }
    defer { state.withLock { _ = $0.interrupts.removeValue(forKey: registration) } }
    return try body()
  }

  /// Interrupts every read under way, and refuses those that start after.
  package func interruptAll() {
    let interrupts = state.withLock { state in
      state.interrupted = true
      return Array(state.interrupts.values)
    }
    for interrupt in interrupts { interrupt() }
  }
}

/// Runs a blocking read, `interrupt` stopping it when the statement running it is interrupted
/// (see ``ReadInterruption``); outside a statement, just `body`.
package func interruptibly<R>(_ interrupt: @escaping @Sendable () -> Void, _ body: () throws -> R) throws -> R
{
  guard let current = ReadInterruption.current else { return try body() }
  return try current.during(interrupt, body)
}

/// Whether the work under way was stopped by the user.
///
/// Its task cancelled (^C at the prompt), or its reads interrupted (^C in `browse`, which
/// interrupts a key's reads, not the statement). A read that fails then was stopped, not
/// broken: its source stays as it was.
package var readsAreStopped: Bool { Task.isCancelled || ReadInterruption.current?.isInterrupted == true }
