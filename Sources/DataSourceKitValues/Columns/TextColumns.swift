import DataSourceKit
import Foundation
import Synchronization

/// Bytes appended one text after another, in one `malloc` block grown with `realloc`.
///
/// On Linux, `realloc` of a large block moves its pages to a larger mapping rather than copying
/// them: growing a column's texts never holds the old bytes and the new at once, as growing an
/// array (a copy into a block twice the size) would.
struct ByteArena {
  private(set) var base: UnsafeMutablePointer<UInt8>?
  private(set) var count = 0
  private var capacity = 0

  /// Makes room for `capacity` bytes in all.
  mutating func reserve(_ capacity: Int) {
    guard capacity > self.capacity else { return }
    guard let grown = realloc(base, capacity) else { fatalError("out of memory") }
    base = grown.bindMemory(to: UInt8.self, capacity: capacity)
    self.capacity = capacity
  }

  @inline(__always) private mutating func makeRoom(_ extra: Int) {
    if count + extra > capacity { reserve(max(capacity + capacity / 2, count + extra, 4096)) }
  }

  @inline(__always) mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
    makeRoom(bytes.count)
    guard let base else { return }
    (base + count).update(from: source, count: bytes.count)
    count += bytes.count
  }

  /// Appends a quoted field's content with its doubled quotes made single.
  mutating func appendUnescaped(_ field: UnsafeBufferPointer<UInt8>) {
    makeRoom(field.count)
    guard let base else { return }
    var i = 0
    while i < field.count {
      base[count] = field[i]
      count += 1
      i += field[i] == UInt8(ascii: "\"") && i + 1 < field.count && field[i + 1] == UInt8(ascii: "\"") ? 2 : 1
    }
  }

  /// The bytes so far, handed over to shared bytes (the arena is empty after).
  mutating func finished() -> SharedBytes {
    // Whatever was reserved and not used is given back.
    if count < capacity, count > 0, let shrunk = realloc(base, count) {
      base = shrunk.bindMemory(to: UInt8.self, capacity: count)
    }
    defer { self = ByteArena() }
    return SharedBytes(mallocated: base, count: count)
  }

  /// Forgets the bytes, keeping their room.
  mutating func removeAll() { count = 0 }

  /// Frees the bytes (an arena not handed over).
  mutating func release() {
    free(base)
    self = ByteArena()
  }
}

/// The distinct texts of a dictionary-coded column: entry 0 is null, the others are texts in the
/// order they were first seen, each also kept as a value so reading one makes no string.
///
/// `@unchecked Sendable`: never written after the column is built.
final class TextDictionary: @unchecked Sendable {
  let storage: SharedBytes
  /// Where each entry's bytes are (entry 0: length 0, no flag: null).
  let refs: FieldRefs
  let values: [Value]
  /// Each entry's place among the entries in text order (null first): computed when first asked.
  var ranks: [UInt32] { rankCache.value { Self.ranks(of: refs, in: storage) } }
  private let rankCache = OnceCache<[UInt32]>()

  init(storage: SharedBytes, refs: FieldRefs) {
    self.storage = storage
    self.refs = refs
    values = (0..<refs.count).map { entry in
      TextColumn.value(
        start: refs.starts[entry], rawLength: refs.lengths[entry], in: storage)
    }
  }
}

extension TextDictionary {
  /// The entries' places in code point order (UTF-8 bytes compared as unsigned, as
  /// ``Value/compare(_:_:)`` orders text; a shorter text before a longer one it begins).
  fileprivate static func ranks(of refs: FieldRefs, in storage: SharedBytes) -> [UInt32] {
    func bytes(_ entry: Int) -> UnsafeBufferPointer<UInt8> {
      let start = Int(refs.starts[entry])
      return UnsafeBufferPointer(
        rebasing: storage.buffer[start..<start + Int(refs.lengths[entry] & FieldRefs.lengthMask)])
    }
    let order = (1..<max(refs.count, 1)).sorted { a, b in
      let (x, y) = (bytes(a), bytes(b))
      let common = min(x.count, y.count)
      if common > 0, let p = x.baseAddress, let q = y.baseAddress {
        let c = memcmp(p, q, common)
        if c != 0 { return c < 0 }
      }
      return x.count < y.count
    }
    var ranks = [UInt32](repeating: 0, count: refs.count)
    for (place, entry) in order.enumerated() { ranks[entry] = UInt32(place + 1) }
    return ranks
  }
}

/// A value worked out once, by whichever reader first asks, and kept.
package final class OnceCache<Value: Sendable>: Sendable {
  private let stored = Mutex<Value?>(nil)

  package init() {}

  package func value(_ make: () -> Value) -> Value {
    stored.withLock { stored in
      if let stored { return stored }
      let made = make()
      stored = made
      return made
    }
  }
}

/// A text column whose texts repeat: a 16-bit code a row into a ``TextDictionary``.
///
/// A column of team names or categories takes two bytes a row rather than its texts; reading a
/// row makes no string; sorting or grouping by it can work on the few distinct texts.
final class DictionaryTextColumn: Column {
  let codes: [UInt16]
  let dictionary: TextDictionary

  init(codes: [UInt16], dictionary: TextDictionary) {
    self.codes = codes
    self.dictionary = dictionary
  }

  var type: ValueType { .text }
  var nullCount: Int { codes.reduce(0) { $0 + ($1 == 0 ? 1 : 0) } }
  func value(at row: Int) -> Value { dictionary.values[Int(codes[row])] }

  func batch(at rows: UnsafeBufferPointer<Int>) -> ValueBatch {
    let refs = dictionary.refs
    let count = rows.count
    // The three arrays filled in one pass (a map each was a tenth of a group by's time).
    var starts: [UInt32] = []
    var lengths: [UInt32] = []
    let batchCodes = [UInt16](unsafeUninitializedCapacity: count) { batchCodes, made in
      starts = [UInt32](unsafeUninitializedCapacity: count) { starts, madeStarts in
        lengths = [UInt32](unsafeUninitializedCapacity: count) { lengths, madeLengths in
          for (k, row) in rows.enumerated() {
            let code = codes[row]
            batchCodes[k] = code
            starts[k] = refs.starts[Int(code)]
            lengths[k] = refs.lengths[Int(code)]
          }
          madeLengths = count
        }
        madeStarts = count
      }
      made = count
    }
    return .texts(
      TextBatch(
        storage: dictionary.storage, starts: starts, lengths: lengths, codes: batchCodes,
        dictionary: dictionary))
  }
}

/// Builds a text column a row at a time, in the form that holds it in the least memory: codes
/// into a dictionary while its texts repeat, the texts one after another once they do not.
///
/// A field is given as written between its quotes, with its length's flag
/// (``FieldRefs/escapedFlag``): a flagged field holds doubled quotes, stored made single; a
/// flagged empty field is empty text; an unflagged empty field, or one `isNull` says, is null.
///
/// A struct, so that a reader's hot loop mutates it as a local variable: a class's stored
/// properties are checked for exclusive access on every write (a quarter of a load's time).
/// Whoever holds one calls ``release()`` if it is not ``finished()``.
struct TextColumnBuilder {
  /// A dictionary past this many texts is given up (codes are 16 bits; entry 0 is null).
  static let maximumEntries = Int(UInt16.max)

  private(set) var rowCount = 0
  /// How many rows the column will have, as far as the reader can tell: what to reserve.
  var expectedRows: Int {
    didSet { if isCoded { codes.reserveCapacity(expectedRows) } }
  }

  // While coded: a code a row, and the distinct texts.
  private(set) var isCoded = true
  private var codes: [UInt16] = []
  private var entries = FieldRefs()
  private var entryBytes = ByteArena()
  private var entryHashes: [UInt64] = [0]
  /// An entry's number, or -1; a power of two long, at most half full.
  private var slots = [Int32](repeating: -1, count: 64)
  private var emptyTextCode: UInt16?
  /// ``KeyHash/seed``, read once (a global is checked for initialization at every read).
  private let seed = KeyHash.seed

  // Once plain: the texts one after another.
  private var refs = FieldRefs()
  private var arena = ByteArena()
  /// Unescaped texts are made here before they are looked up.
  private var scratch = ByteArena()

  init(expectedRows: Int) {
    self.expectedRows = expectedRows
    codes.reserveCapacity(expectedRows)
    entries.append(start: 0, length: 0, escaped: false)
  }

  /// Frees the bytes of a builder that will not be finished.
  mutating func release() {
    entryBytes.release()
    arena.release()
    scratch.release()
  }

  mutating func appendNull() {
    rowCount += 1
    if isCoded {
      codes.append(0)
    } else {
      refs.append(start: arena.count, length: 0, escaped: false)
    }
  }

  /// Appends a field (see the type's notes for what its flag means).
  mutating func append(_ field: UnsafeBufferPointer<UInt8>, rawLength: UInt32, isNull: Bool) {
    let length = Int(rawLength & FieldRefs.lengthMask)
    if isNull || rawLength == 0 { return appendNull() }
    if length == 0 { return appendEmptyText() }
    let escaped = rawLength & FieldRefs.escapedFlag != 0
    rowCount += 1
    // A new text would take a code past 16 bits: the dictionary is given up first.
    if isCoded, entries.count > Self.maximumEntries { becomePlain() }
    guard isCoded else {
      let start = arena.count
      if escaped { arena.appendUnescaped(field) } else { arena.append(field) }
      refs.append(start: start, length: arena.count - start, escaped: false)
      return
    }
    if escaped {
      scratch.removeAll()
      scratch.appendUnescaped(field)
      codes.append(code(of: UnsafeBufferPointer(start: scratch.base, count: scratch.count)))
    } else {
      codes.append(code(of: field))
    }
    if rowCount >= 1024 && entries.count * 2 > rowCount { becomePlain() }
  }

  /// The code of the row appended last, while the column is coded.
  var lastCode: UInt16? { isCoded ? codes.last : nil }

  /// Appends the text of a code ``lastCode`` gave, while the column is coded; `false` once it is
  /// plain (nothing is appended).
  mutating func appendAgain(code: Int32) -> Bool {
    guard isCoded, code > 0, code < entries.count else { return false }
    rowCount += 1
    codes.append(UInt16(truncatingIfNeeded: code))
    return true
  }

  /// Appends the texts of codes ``lastCode`` gave, `codes[index]` for each of `indices`, while
  /// the column is coded; `false` (nothing appended) once it is plain.
  mutating func appendAgain(_ indices: UnsafeBufferPointer<UInt64>, codes known: UnsafeBufferPointer<Int32>)
    -> Bool
  {
    guard isCoded else { return false }
    rowCount += indices.count
    let start = codes.count
    codes.append(contentsOf: repeatElement(0, count: indices.count))
    codes.withUnsafeMutableBufferPointer { out in
      for (k, index) in indices.enumerated() {
        out[start + k] = UInt16(truncatingIfNeeded: known[Int(index)])
      }
    }
    return true
  }

  private mutating func appendEmptyText() {
    rowCount += 1
    if isCoded, emptyTextCode == nil, entries.count > Self.maximumEntries { becomePlain() }
    guard isCoded else {
      refs.append(start: arena.count, length: 0, escaped: true)
      return
    }
    let code = emptyTextCode ?? UInt16(entries.count)
    if emptyTextCode == nil {
      emptyTextCode = code
      entries.append(start: entryBytes.count, length: 0, escaped: true)
      entryHashes.append(0)
    }
    codes.append(code)
  }

  /// The code of a non-empty text, added to the dictionary when new.
  @inline(__always)
  private mutating func code(of text: UnsafeBufferPointer<UInt8>) -> UInt16 {
    let hash = KeyHash.bytes(text, seed: seed)
    let mask = slots.count - 1
    var slot = Int(truncatingIfNeeded: hash) & mask
    while true {
      let entry = Int(slots[slot])
      if entry < 0 { break }
      if entryHashes[entry] == hash, Int(entries.lengths[entry]) == text.count,
        let stored = entryBytes.base, let given = text.baseAddress,
        Self.equal(stored + Int(entries.starts[entry]), given, count: text.count)
      {
        return UInt16(entry)
      }
      slot = (slot + 1) & mask
    }
    let entry = entries.count
    entries.append(start: entryBytes.count, length: text.count, escaped: false)
    entryBytes.append(text)
    entryHashes.append(hash)
    slots[slot] = Int32(entry)
    if entries.count * 2 > slots.count { growSlots() }
    return UInt16(truncatingIfNeeded: entry)
  }

  /// Whether `count` bytes at `a` and at `b` are the same: a word at a time, inlined.
  ///
  /// A text is a few bytes: `memcmp`'s call cost more than its comparison (a sixth of a column's
  /// coding).
  @inline(__always)
  private static func equal(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, count: Int) -> Bool {
    let (x, y) = (UnsafeRawPointer(a), UnsafeRawPointer(b))
    guard count >= 8 else {
      for k in 0..<count where a[k] != b[k] { return false }
      return true
    }
    var offset = 0
    while offset + 8 < count {
      guard
        x.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
          == y.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
      else { return false }
      offset += 8
    }
    // The last eight bytes, overlapping those compared already.
    return x.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
      == y.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
  }

  private mutating func growSlots() {
    slots = [Int32](repeating: -1, count: slots.count * 2)
    let mask = slots.count - 1
    for entry in 1..<entries.count where entries.lengths[entry] != FieldRefs.escapedFlag {
      var slot = Int(truncatingIfNeeded: entryHashes[entry]) & mask
      while slots[slot] >= 0 { slot = (slot + 1) & mask }
      slots[slot] = Int32(entry)
    }
  }

  /// Gives up the dictionary: the rows so far become texts one after another.
  private mutating func becomePlain() {
    isCoded = false
    let plain = FieldRefs(capacity: max(expectedRows, rowCount) + 16)
    var total = 0
    for code in codes { total += Int(entries.lengths[Int(code)] & FieldRefs.lengthMask) }
    // Room for the rows still to come at the length of those so far, and a little more.
    arena.reserve(total / max(rowCount, 1) * max(expectedRows, rowCount) * 9 / 8 + 4096)
    for code in codes {
      let entry = Int(code)
      let length = Int(entries.lengths[entry] & FieldRefs.lengthMask)
      let start = arena.count
      arena.append(
        UnsafeBufferPointer(start: entryBytes.base.map { $0 + Int(entries.starts[entry]) }, count: length))
      plain.append(start: start, length: length, escaped: entries.lengths[entry] == FieldRefs.escapedFlag)
    }
    refs = plain
    codes = []
    entries = FieldRefs()
    entryBytes.release()
    entryHashes = []
    slots = []
  }

  /// The column: dictionary-coded or plain, as the texts turned out.
  mutating func finished() -> any Column {
    scratch.release()
    if isCoded {
      let dictionary = TextDictionary(storage: entryBytes.finished(), refs: entries)
      return DictionaryTextColumn(codes: codes, dictionary: dictionary)
    }
    return TextColumn(refs, storage: arena.finished())
  }
}
