/// The diff's table of identities: each distinct identity once, with the first place it holds in
/// the old data (or a mark when it is new).
///
/// A `Dictionary` would do, and did; this is its shape cut to what the diff needs. The table the
/// probes walk holds 8 bytes a slot (32 bits of the hash, to skip most wrong slots without
/// touching the identity, and the entry's number), so a table of 100,000 identities is 2 MB of
/// slots instead of 5 MB of keys, values and bitmap: the diff is bound by the cache misses of
/// its lookups (each identity is hashed once, as in `Dictionary`), and fewer bytes are fewer
/// misses. Linear probing at a load of at most a half; entries are never removed.
@usableFromInline
struct IdentityTable<ID: Hashable> {
  /// Each distinct identity, in the order it was first entered.
  @usableFromInline var identities: [ID] = []
  /// The place of each entry: its first place in the old data, or a mark.
  @usableFromInline var places: [SectionedDiff.Place] = []
  /// Open-addressed slots: 0 is empty, else the hash's high 32 bits and the entry's number + 1.
  @usableFromInline var slots: [UInt64]
  @usableFromInline var mask: Int

  /// A table with room for `capacity` identities before it grows.
  @inlinable
  init(capacity: Int) {
    var size = 16
    while size < capacity * 2 { size <<= 1 }
    slots = [UInt64](repeating: 0, count: size)
    mask = size - 1
    identities.reserveCapacity(capacity)
    places.reserveCapacity(capacity)
  }

  /// The entry of `identity`, entering it with `place` when it is new; `isNew` says which.
  @inlinable
  mutating func enter(_ identity: ID, place: SectionedDiff.Place) -> (entry: Int, isNew: Bool) {
    let hash = identity.hashValue
    let tag = UInt64(truncatingIfNeeded: UInt(bitPattern: hash) >> 32) << 32
    var slot = hash & mask
    while true {
      let stored = slots[slot]
      if stored == 0 { break }
      if stored & 0xFFFF_FFFF_0000_0000 == tag {
        let entry = Int(stored & 0xFFFF_FFFF) - 1
        if identities[entry] == identity { return (entry, false) }
      }
      slot = (slot + 1) & mask
    }
    let entry = identities.count
    identities.append(identity)
    places.append(place)
    slots[slot] = tag | UInt64(entry + 1)
    if identities.count * 2 > slots.count { grow() }
    return (entry, true)
  }

  /// Twice the slots, every entry placed again (hashing its identity again: rare, since the
  /// diff sizes the table for the data up front).
  @usableFromInline
  mutating func grow() {
    let size = slots.count * 2
    slots = [UInt64](repeating: 0, count: size)
    mask = size - 1
    for (entry, identity) in identities.enumerated() {
      let hash = identity.hashValue
      let tag = UInt64(truncatingIfNeeded: UInt(bitPattern: hash) >> 32) << 32
      var slot = hash & mask
      while slots[slot] != 0 { slot = (slot + 1) & mask }
      slots[slot] = tag | UInt64(entry + 1)
    }
  }
}
