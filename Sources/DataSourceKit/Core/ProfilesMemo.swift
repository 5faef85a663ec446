import Synchronization

/// Field profiles worked out from a base provider's, kept while the base's stay the same.
///
/// Every stage of a chain asks its base for profiles, down the whole chain, whenever it is asked
/// itself, and a script of thousands of `let v = v | extend …` asks once per statement: worked
/// out anew each time, the chain would be quadratic in dictionaries and copies. Each stage hands
/// up the same array while its base does, so a repeated question is answered by comparisons
/// that stop at the arrays' shared storage.
///
/// While the stage's ``StructureClock`` (which follows everything below it) has not moved, the
/// kept profiles are handed up without asking the base at all, so a chain of `extend`s answers
/// at once.
package final class ProfilesMemo: Sendable {
  private let kept = Mutex<(epoch: UInt64, base: [FieldProfile]?, profiles: [FieldProfile]?)?>(nil)

  package init() {}

  /// The profiles `workOut` makes of the base's, worked out again only when `clock` (the
  /// stage's) has moved and the base's differ from the last.
  package func profiles(
    at clock: StructureClock, of base: () -> [FieldProfile]?, _ workOut: ([FieldProfile]?) -> [FieldProfile]?
  ) -> [FieldProfile]? {
    let epoch = clock.current
    let last = kept.withLock { $0 }
    if let last, last.epoch == epoch { return last.profiles }
    let baseProfiles = base()
    let profiles = if let last, last.base == baseProfiles { last.profiles } else { workOut(baseProfiles) }
    kept.withLock { $0 = (epoch, baseProfiles, profiles) }
    return profiles
  }
}
