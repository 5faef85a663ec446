import Synchronization

/// What a stage works out from its base's answer (the shell's field profiles), kept while the
/// base's answer stays the same.
///
/// Every stage of a chain asks its base, down the whole chain, whenever it is asked itself, and
/// a script of thousands of `let v = v | extend …` asks once per statement: worked out anew each
/// time, the chain would be quadratic in dictionaries and copies. Each stage hands up the same
/// array while its base does, so a repeated question is answered by comparisons that stop at
/// the arrays' shared storage.
///
/// While the stage's ``StructureClock`` (which follows everything below it) has not moved, the
/// kept answer is handed up without asking the base at all, so a chain of `extend`s answers at
/// once.
package final class ClockMemo: Sendable {
  /// The clock's epoch, the base's answer and what was worked out of it, each an `Optional` of
  /// the caller's type.
  private let kept = Mutex<(epoch: UInt64, base: any Sendable, worked: any Sendable)?>(nil)

  package init() {}

  /// What `workOut` makes of the base's answer, worked out again only when `clock` (the
  /// stage's) has moved and the base's answer differs from the last.
  package func value<T: Equatable & Sendable>(
    at clock: StructureClock, of base: () -> T?, _ workOut: (T?) -> T?
  ) -> T? {
    let epoch = clock.current
    let last = kept.withLock { $0 }
    if let last, last.epoch == epoch, let worked = last.worked as? T? { return worked }
    let baseAnswer = base()
    let worked: T? =
      if let last, let lastBase = last.base as? T?, lastBase == baseAnswer,
        let lastWorked = last.worked as? T?
      {
        lastWorked
      } else {
        workOut(baseAnswer)
      }
    kept.withLock { $0 = (epoch, baseAnswer, worked) }
    return worked
  }
}
