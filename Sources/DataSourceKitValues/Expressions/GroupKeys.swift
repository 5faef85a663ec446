import DataSourceKit

/// Finds the group (or the join match) of each item's key among the keys seen so far: an
/// open-addressing hash table over the keys, hashed by a hash that reads a number or the bytes
/// of a text without building a `Value` (a text column's bytes are hashed in place).
///
/// Keys are equal as `==` says for values: `1` with `1.0`, text by its UTF-8 bytes, and null
/// with null (a group of the missing). This is what `group by`, `distinct` and `join` spent most
/// of their time on with a `Dictionary<Value, Int>`: a string made per row, then hashed by
/// SipHash.
package struct KeyTable {
  /// Each entry's keys (one for a single key), in the order they were added.
  package private(set) var keys: [[Value]] = []
  private var hashes: [UInt64] = []
  /// An entry's position, or -1; a power of two long, at most half full.
  private var slots = [Int32](repeating: -1, count: 16)
  /// The entry of each code of the dictionary-coded column last looked up (-1: not yet).
  private var entryOfCode: [Int] = []
  private var codedDictionary: TextDictionary?
  /// Several dictionary-coded keys: the entry of each combination of their codes (-1: not yet),
  /// and the dictionaries it was made for.
  private var entryOfCodes: [Int32] = []
  private var codedDictionaries: [TextDictionary] = []

  package var count: Int { keys.count }

  package init() {}

  /// The entry whose keys hash as `hash` and satisfy `matches`, or `nil`.
  @inline(__always)
  package func find(hash: UInt64, matches: ([Value]) -> Bool) -> Int? {
    let mask = slots.count - 1
    var slot = Int(truncatingIfNeeded: hash) & mask
    while true {
      let entry = Int(slots[slot])
      if entry < 0 { return nil }
      if hashes[entry] == hash, matches(keys[entry]) { return entry }
      slot = (slot + 1) & mask
    }
  }

  /// The entry of the keys `matches` accepts, added with `keys()` when there is none; whether it
  /// is new.
  @inline(__always)
  mutating func entry(hash: UInt64, matches: ([Value]) -> Bool, keys makeKeys: () -> [Value]) -> (
    Int, isNew: Bool
  ) {
    let mask = slots.count - 1
    var slot = Int(truncatingIfNeeded: hash) & mask
    while true {
      let entry = Int(slots[slot])
      if entry < 0 { break }
      if hashes[entry] == hash, matches(keys[entry]) { return (entry, false) }
      slot = (slot + 1) & mask
    }
    let entry = keys.count
    keys.append(makeKeys())
    hashes.append(hash)
    slots[slot] = Int32(entry)
    if keys.count * 2 > slots.count { grow() }
    return (entry, true)
  }

  /// The entry of each of a batch's items by their keys (`keys[k]` the batch of key k), those not
  /// seen before added: the keys' kinds are looked at once, not per item.
  package mutating func entries(_ keys: [ValueBatch], count: Int) -> [Int] {
    var entries = [Int](repeating: 0, count: count)
    // No keys: every item in one group.
    if keys.isEmpty {
      if count > 0 { _ = entry([]) }
      return entries
    }
    if keys.count == 1, case .texts(let texts) = keys[0], let codes = texts.codes,
      let dictionary = texts.dictionary
    {
      // A dictionary-coded column: each distinct text is looked up once, whatever the batch.
      if codedDictionary !== dictionary {
        codedDictionary = dictionary
        entryOfCode = [Int](repeating: -1, count: dictionary.values.count)
      }
      for i in 0..<count {
        let code = Int(codes[i])
        if entryOfCode[code] < 0 { entryOfCode[code] = entry([dictionary.values[code]]).0 }
        entries[i] = entryOfCode[code]
      }
    } else if let coded = Self.codedKeys(keys) {
      // Dictionary-coded columns (a group by name, team): each combination of their texts is
      // looked up once, by the codes' place in a table of every combination.
      if codedDictionaries.count != coded.count
        || zip(codedDictionaries, coded).contains(where: { $0 !== $1.dictionary })
      {
        codedDictionaries = coded.map(\.dictionary)
        entryOfCodes = [Int32](
          repeating: -1, count: coded.reduce(1) { $0 * $1.dictionary.values.count })
      }
      var strides = [Int](repeating: 1, count: coded.count)
      for k in coded.indices.dropFirst() {
        strides[k] = strides[k - 1] * coded[k - 1].dictionary.values.count
      }
      var places = [Int](repeating: 0, count: count)
      for (k, key) in coded.enumerated() {
        let stride = strides[k]
        key.codes.withUnsafeBufferPointer { codes in
          for i in 0..<count { places[i] += Int(codes[i]) * stride }
        }
      }
      for i in 0..<count {
        let place = places[i]
        if entryOfCodes[place] < 0 {
          entryOfCodes[place] = Int32(entry(coded.map { $0.dictionary.values[Int($0.codes[i])] }).0)
        }
        entries[i] = Int(entryOfCodes[place])
      }
    } else if keys.count == 1, case .texts(let texts) = keys[0] {
      for i in 0..<count {
        guard let field = texts.plainBytes(i) else {
          entries[i] = entry([texts[i]]).0
          continue
        }
        entries[i] =
          entry(
            hash: KeyHash.bytes(field),
            matches: { key in
              guard case .string(var text) = key[0] else { return false }
              return text.withUTF8 { Value.compareBytes(field, $0) == .orderedSame }
            }, keys: { [texts[i]] }
          ).0
      }
    } else if keys.count == 1, case .ints(let ints, let nulls) = keys[0] {
      for i in 0..<count {
        if nulls?[i] == true {
          entries[i] = entry([.null]).0
          continue
        }
        let int = ints[i]
        entries[i] =
          entry(
            hash: KeyHash.int(int),
            matches: { key in
              if case .int(let other) = key[0] { return other == int }
              return key[0] == .int(int)
            }, keys: { [.int(int)] }
          ).0
      }
    } else {
      // Each key's hashes and matcher made once a batch: a batch read from the array for every
      // row copied its arrays' references (two thirds of a two-key group by's time).
      var hashes = keys[0].keyHashes(count)
      for key in keys.dropFirst() {
        let more = key.keyHashes(count)
        for i in 0..<count { hashes[i] = KeyHash.combine(hashes[i], more[i]) }
      }
      let matchers = keys.map(\.keyMatcher)
      for i in 0..<count {
        entries[i] =
          entry(
            hash: hashes[i], matches: { key in matchers.indices.allSatisfy { matchers[$0](i, key[$0]) } },
            keys: { keys.map { $0[i] } }
          ).0
      }
    }
    return entries
  }

  /// Several keys, each a dictionary-coded text batch, whose dictionaries' combinations are at
  /// most a million: their codes and dictionaries; `nil` otherwise.
  private static func codedKeys(_ keys: [ValueBatch]) -> [(codes: [UInt16], dictionary: TextDictionary)]? {
    guard keys.count > 1 else { return nil }
    var coded: [(codes: [UInt16], dictionary: TextDictionary)] = []
    var combinations = 1
    for key in keys {
      guard case .texts(let texts) = key, let codes = texts.codes, let dictionary = texts.dictionary else {
        return nil
      }
      combinations *= max(dictionary.values.count, 1)
      guard combinations <= 1 << 20 else { return nil }
      coded.append((codes, dictionary))
    }
    return coded
  }

  /// The entry of each of a batch's items by its one key, or -1 where the table has none (what
  /// a join looks up): ints and texts in the file are matched without a value made per item.
  package func find(_ batch: ValueBatch) -> [Int] {
    var found = [Int](repeating: -1, count: batch.count)
    switch batch {
    case .ints(let ints, let nulls):
      for i in ints.indices {
        if nulls?[i] == true {
          found[i] = find(hash: KeyHash.of(.null), matches: { $0[0] == .null }) ?? -1
          continue
        }
        let int = ints[i]
        found[i] =
          find(
            hash: KeyHash.int(int),
            matches: { key in
              if case .int(let other) = key[0] { return other == int }
              return key[0] == .int(int)
            }) ?? -1
      }
    case .texts(let texts):
      for i in 0..<texts.count {
        guard let field = texts.plainBytes(i) else {
          let value = texts[i]
          found[i] = find(hash: KeyHash.of(value), matches: { $0[0] == value }) ?? -1
          continue
        }
        found[i] =
          find(
            hash: KeyHash.bytes(field),
            matches: { key in
              guard case .string(var text) = key[0] else { return false }
              return text.withUTF8 { Value.compareBytes(field, $0) == .orderedSame }
            }) ?? -1
      }
    default:
      for i in 0..<batch.count {
        found[i] = find(hash: batch.keyHash(i), matches: { batch.keyMatches(i, $0[0]) }) ?? -1
      }
    }
    return found
  }

  /// The entry of `keys` (values already made), added when new.
  package mutating func entry(_ keys: [Value]) -> (Int, isNew: Bool) {
    // As `entries` hashes a batch's items: the first key's hash, combined with each next one's.
    let hash =
      keys.first.map { first in
        keys.dropFirst().reduce(KeyHash.of(first)) { KeyHash.combine($0, KeyHash.of($1)) }
      }
      ?? KeyHash.empty
    return entry(hash: hash, matches: { $0 == keys }, keys: { keys })
  }

  private mutating func grow() {
    slots = [Int32](repeating: -1, count: slots.count * 2)
    let mask = slots.count - 1
    for (entry, hash) in hashes.enumerated() {
      var slot = Int(truncatingIfNeeded: hash) & mask
      while slots[slot] >= 0 { slot = (slot + 1) & mask }
      slots[slot] = Int32(entry)
    }
  }
}

/// A hash of values that agrees with their `==`: equal values hash alike.
package enum KeyHash {
  /// Chosen at random for each run.
  ///
  /// A file made to put many keys in one slot of the table (a quadratic grouping) cannot then
  /// be made in advance. Group order does not depend on it.
  static let seed = UInt64.random(in: 0...UInt64.max)

  /// The hash of no keys.
  static let empty: UInt64 = 0

  /// Mixes the bits (MurmurHash3's finalizer, over the seeded value), so the low bits a table
  /// uses depend on all of them.
  @inline(__always)
  static func mix(_ x: UInt64) -> UInt64 { mix(x, seed: seed) }

  @inline(__always)
  static func mix(_ x: UInt64, seed: UInt64) -> UInt64 {
    var x = x ^ seed
    x ^= x >> 33
    x &*= 0xff51_afd7_ed55_8ccd
    x ^= x >> 33
    x &*= 0xc4ce_b9fe_1a85_ec53
    x ^= x >> 33
    return x
  }

  @inline(__always)
  static func combine(_ a: UInt64, _ b: UInt64) -> UInt64 { mix(a &* 31 &+ b) }

  /// An int; a double equal to an int hashes as that int.
  @inline(__always)
  static func int(_ i: Int) -> UInt64 { mix(UInt64(bitPattern: Int64(i)) ^ 0x9e37_79b9_7f4a_7c15) }

  @inline(__always)
  static func double(_ d: Double) -> UInt64 {
    if let i = Int(exactly: d) { return int(i) }
    // Every NaN is one value to `==` on values (see Value.compareNumbers).
    return mix(d.isNaN ? 0x7ff8_0000_0000_0000 : d.bitPattern)
  }

  /// UTF-8 bytes, eight at a time.
  @inline(__always)
  static func bytes(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 { self.bytes(bytes, seed: seed) }

  /// UTF-8 bytes, with the seed given (read once by a loop that hashes many).
  @inline(__always)
  static func bytes(_ bytes: UnsafeBufferPointer<UInt8>, seed: UInt64) -> UInt64 {
    var hash = UInt64(bytes.count) &* 0x9e37_79b9_7f4a_7c15
    guard let base = bytes.baseAddress else { return mix(hash, seed: seed) }
    let raw = UnsafeRawPointer(base)
    let count = bytes.count
    var offset = 0
    while offset + 8 <= count {
      hash = (hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x1000_0000_01b3
      hash = (hash << 31) | (hash >> 33)
      offset += 8
    }
    guard offset < count else { return mix(hash, seed: seed) }
    var tail: UInt64
    if count >= 8 {
      // The last eight bytes, overlapping those already read: one load rather than a loop.
      tail = raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) >> UInt64(8 * (offset + 8 - count))
    } else {
      tail = 0
      var shift: UInt64 = 0
      while offset < count {
        tail |= UInt64(base[offset]) << shift
        shift += 8
        offset += 1
      }
    }
    return mix(hash ^ tail, seed: seed)
  }

  package static func of(_ value: Value) -> UInt64 {
    switch value {
    case .null: 0x5bd1_e995
    case .bool(let b): b ? 0x2545_f491 : 0x1b87_3593
    case .int(let i): int(i)
    case .double(let d): double(d)
    case .string(var s): s.withUTF8 { bytes($0) }
    case .date(let days): mix(UInt64(bitPattern: Int64(days)) ^ 0xd6e8_feb8_6659_fd93)
    case .timestamp(let micros): mix(UInt64(bitPattern: Int64(micros)) ^ 0xa076_1d64_78bd_642f)
    case .list, .record: UInt64(bitPattern: Int64(value.hashValue))
    }
  }
}

extension ValueBatch {
  /// The key hash of item `i`, as ``KeyHash/of(_:)`` gives for its value.
  @inline(__always)
  func keyHash(_ i: Int) -> UInt64 {
    switch self {
    case .ints(let v, let nulls) where nulls?[i] != true: KeyHash.int(v[i])
    case .doubles(let v, let nulls) where nulls?[i] != true: KeyHash.double(v[i])
    case .texts(let t):
      if let field = t.plainBytes(i) { KeyHash.bytes(field) } else { KeyHash.of(t[i]) }
    default: KeyHash.of(self[i])
    }
  }

  /// The key hashes of the first `count` items, each as ``keyHash(_:)`` gives it.
  func keyHashes(_ count: Int) -> [UInt64] {
    switch self {
    case .ints(let v, let nulls):
      let null = KeyHash.of(.null)
      return (0..<count).map { nulls?[$0] == true ? null : KeyHash.int(v[$0]) }
    case .doubles(let v, let nulls):
      let null = KeyHash.of(.null)
      return (0..<count).map { nulls?[$0] == true ? null : KeyHash.double(v[$0]) }
    case .texts(let t):
      return (0..<count).map { i in t.plainBytes(i).map(KeyHash.bytes) ?? KeyHash.of(t[i]) }
    default:
      return (0..<count).map { keyHash($0) }
    }
  }

  /// Whether item `i`'s value is a key, as ``keyMatches(_:_:)`` says, the batch's kind looked at
  /// once.
  var keyMatcher: (Int, Value) -> Bool {
    switch self {
    case .ints(let v, let nulls):
      return { i, key in
        if case .int(let k) = key { return nulls?[i] != true && v[i] == k }
        return self[i] == key
      }
    case .texts(let t):
      return { i, key in
        guard case .string(var k) = key, let field = t.plainBytes(i) else { return t[i] == key }
        return k.withUTF8 { Value.compareBytes(field, $0) == .orderedSame }
      }
    default:
      return { i, key in self[i] == key }
    }
  }

  /// Whether item `i`'s value is `key` (as `==` says, null equal to null).
  @inline(__always)
  func keyMatches(_ i: Int, _ key: Value) -> Bool {
    switch (self, key) {
    case (.ints(let v, let nulls), .int(let k)): return nulls?[i] != true && v[i] == k
    case (.texts(let t), .string(var k)):
      guard let field = t.plainBytes(i) else { return t[i] == key }
      return k.withUTF8 { Value.compareBytes(field, $0) == .orderedSame }
    default: return self[i] == key
    }
  }
}
