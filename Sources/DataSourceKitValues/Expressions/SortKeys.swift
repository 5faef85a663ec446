import DataSourceKit
import Foundation

/// The sort keys of every item of a stage, read once from columns into a form that sorts without
/// a `Value` per comparison.
///
/// Each key becomes a 64-bit prefix whose order is the keys' order: exactly, for ints, doubles,
/// booleans, dates and timestamps, and by the first eight bytes for text, where equal prefixes
/// then compare the whole UTF-8 bytes (code point order, as ``Value/compare(_:_:)`` orders
/// text). The prefixes are radix sorted. A `sort by name` over 750,000 CSV rows compared
/// `Value`s, a string each, twenty million times (1.6 s).
///
/// Keys of mixed kinds (ints beside doubles, text beside numbers) have no such prefix: ``init(_:)``
/// returns `nil` and the stage sorts `Value`s, with the same order.
package struct ColumnSortKeys {
  /// The kind every non-null key has.
  private enum Kind: Equatable {
    case int, double, bool, text, date, timestamp
  }

  private var kind: Kind?
  /// Each item's prefix (0 where null).
  private var prefixes: [UInt64] = []
  private var isNull: [Bool] = []
  /// Text keys: every key's bytes, one after another, and where each starts and ends.
  private var arena: [UInt8] = []
  private var textStarts: [Int] = []
  /// Whether equal prefixes are equal keys (texts of one dictionary, by their ranks).
  private var prefixesAreKeys = false
  /// For texts of one dictionary: its number of entries (ranks run 0 to one less).
  private var dictionarySize: Int?

  /// The keys of the batches' items, in order; `nil` when they are not all of one kind.
  package init?(_ batches: [ValueBatch]) {
    let total = batches.reduce(0) { $0 + $1.count }
    prefixes.reserveCapacity(total)
    isNull.reserveCapacity(total)
    if let dictionary = Self.commonDictionary(of: batches) {
      // Texts of one dictionary-coded column: each key is its text's rank among the
      // dictionary's, exact, so no text is compared again.
      kind = .text
      prefixesAreKeys = true
      let ranks = dictionary.ranks
      dictionarySize = ranks.count
      for case .texts(let texts) in batches {
        for code in texts.codes ?? [] {
          prefixes.append(UInt64(ranks[Int(code)]))
          isNull.append(code == 0)
        }
      }
      return
    }
    for batch in batches {
      guard add(batch) else { return nil }
    }
    if kind == .text { textStarts.append(arena.count) }
  }

  /// The dictionary every batch's texts are coded in, when there is one.
  private static func commonDictionary(of batches: [ValueBatch]) -> TextDictionary? {
    var common: TextDictionary?
    for batch in batches {
      guard case .texts(let texts) = batch, let dictionary = texts.dictionary, texts.codes != nil,
        common == nil || common === dictionary
      else { return nil }
      common = dictionary
    }
    return common
  }

  private mutating func add(_ batch: ValueBatch) -> Bool {
    switch batch {
    case .ints(let ints, let nulls):
      guard take(.int) else { return false }
      for i in ints.indices {
        if nulls?[i] == true { addNull() } else { add(Self.intPrefix(ints[i])) }
      }
    case .doubles(let doubles, let nulls):
      guard take(.double) else { return false }
      for i in doubles.indices {
        if nulls?[i] == true { addNull() } else { add(Self.doublePrefix(doubles[i])) }
      }
    case .bools(let bools):
      guard take(.bool) else { return false }
      for b in bools {
        if b == 2 { addNull() } else { add(UInt64(b)) }
      }
    case .texts(let texts):
      guard take(.text) else { return false }
      for i in 0..<texts.count {
        if let bytes = texts.plainBytes(i) {
          addText(bytes)
        } else if case .string(var text) = texts[i] {
          text.withUTF8 { addText($0) }
        } else {
          addNull()
        }
      }
    case .values(let values):
      for (index, value) in values.enumerated() {
        // ^C: no keys (the caller then stops where it checks).
        if index & 0xFFFF == 0xFFFF, Task.isCancelled { return false }
        guard add(value) else { return false }
      }
    case .constant(let value, let count):
      for _ in 0..<count {
        guard add(value) else { return false }
      }
    }
    return true
  }

  private mutating func add(_ value: Value) -> Bool {
    switch value {
    case .null:
      addNull()
    case .int(let i):
      guard take(.int) else { return false }
      add(Self.intPrefix(i))
    case .double(let d):
      guard take(.double) else { return false }
      add(Self.doublePrefix(d))
    case .bool(let b):
      guard take(.bool) else { return false }
      add(b ? 1 : 0)
    case .date(let days):
      guard take(.date) else { return false }
      add(Self.intPrefix(days))
    case .timestamp(let micros):
      guard take(.timestamp) else { return false }
      add(Self.intPrefix(micros))
    case .string(var text):
      guard take(.text) else { return false }
      text.withUTF8 { addText($0) }
    case .list, .record:
      return false
    }
    return true
  }

  /// Whether keys of `kind` may join the keys so far.
  private mutating func take(_ kind: Kind) -> Bool {
    if self.kind == nil {
      self.kind = kind
      // Text keys need a start for each null before the first text.
      if kind == .text { textStarts = [Int](repeating: 0, count: prefixes.count) }
    }
    return self.kind == kind
  }

  private mutating func add(_ prefix: UInt64) {
    prefixes.append(prefix)
    isNull.append(false)
  }

  private mutating func addNull() {
    prefixes.append(0)
    isNull.append(true)
    if kind == .text { textStarts.append(arena.count) }
  }

  private mutating func addText(_ bytes: UnsafeBufferPointer<UInt8>) {
    textStarts.append(arena.count)
    arena.append(contentsOf: bytes)
    var prefix: UInt64 = 0
    for k in 0..<8 { prefix = prefix << 8 | UInt64(k < bytes.count ? bytes[k] : 0) }
    add(prefix)
  }

  /// An int's bits with the sign flipped: unsigned order is then signed order.
  @inline(__always)
  private static func intPrefix(_ i: Int) -> UInt64 { UInt64(bitPattern: Int64(i)) ^ (1 << 63) }

  /// A double's bits arranged so that unsigned order is numeric order: -0.0 as 0.0 (they are
  /// equal), NaN after every number (as ``Value/compare(_:_:)`` puts it).
  @inline(__always)
  private static func doublePrefix(_ d: Double) -> UInt64 {
    if d.isNaN { return .max }
    let bits = (d == 0 ? 0.0 : d).bitPattern
    return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
  }

  /// The positions in `range` in key order: equal keys in the order `range` gives them (the sort
  /// is stable), nulls last in that order whatever the direction, as `sort by` orders them.
  ///
  /// - Complexity: O(m) for m positions with keys of one number kind (a radix sort of the
  ///   prefixes); text that ties in its first eight bytes is radix sorted again by the next
  ///   eight, in each run of ties, until the texts differ or end.
  func order(of range: some Collection<Int>, direction: SortDirection) -> [Int] {
    sortedOrder(of: range, direction: direction)
  }

  /// ``order(of:direction:)`` for an array of positions, as another module calls it: the
  /// generic one is specialized here, where an array is sorted, not behind a witness table per
  /// position (a window's order took a fifth longer that way).
  package func order(of positions: [Int], direction: SortDirection) -> [Int] {
    sortedOrder(of: positions, direction: direction)
  }

  private func sortedOrder(of range: some Collection<Int>, direction: SortDirection) -> [Int] {
    if prefixesAreKeys, let most = dictionarySize {
      // A section much smaller than the dictionary: sorted by comparison, not by a bucket a rank.
      guard range.count >= most / 4 else { return comparisonOrder(of: range, direction: direction) }
      return countingOrder(of: range, direction: direction, ranks: most)
    }
    var entries: [SortEntry] = []
    entries.reserveCapacity(range.count)
    var nulls: [Int] = []
    let flip: UInt64 = direction == .ascending ? 0 : .max
    for position in range {
      if isNull[position] {
        nulls.append(position)
      } else {
        entries.append(SortEntry(key: prefixes[position] ^ flip, position: position))
      }
    }
    // ^C leaves the order cut short, which the caller checks for: sorting ten million keys takes
    // seconds in a debug build, and would hold the statement past its interruption.
    var scratch = entries
    entries.withUnsafeMutableBufferPointer { entries in
      scratch.withUnsafeMutableBufferPointer { scratch in
        let buffers = SortBuffers(entries: entries, scratch: scratch)
        buffers.sortByKey()
        guard kind == .text, !prefixesAreKeys else { return }
        arena.withUnsafeBufferPointer { bytes in
          textStarts.withUnsafeBufferPointer { starts in
            SortTexts(bytes: bytes, starts: starts, flip: flip).sortTies(buffers, sortedBytes: 8)
          }
        }
      }
    }
    return entries.map(\.position) + nulls
  }

  /// Where each run of positions with equal keys (a window's peers) starts in `order`, and one
  /// past the last: a pass here, where comparing two positions' keys is inlined.
  package static func peerStarts(in order: [Int], keys: [ColumnSortKeys]) -> [Int] {
    var starts = [0]
    for k in order.indices.dropFirst() where !keys.allSatisfy({ $0.sameKey(order[k - 1], order[k]) }) {
      starts.append(k)
    }
    starts.append(order.count)
    return starts
  }

  /// Whether the keys at two positions are equal (two nulls are): a window's peers.
  func sameKey(_ a: Int, _ b: Int) -> Bool {
    if isNull[a] || isNull[b] { return isNull[a] && isNull[b] }
    guard prefixes[a] == prefixes[b] else { return false }
    guard kind == .text, !prefixesAreKeys else { return true }
    return arena[textStarts[a]..<textStarts[a + 1]].elementsEqual(arena[textStarts[b]..<textStarts[b + 1]])
  }

  /// The positions by their exact prefixes, compared: equal ones in their order, nulls last.
  private func comparisonOrder(of range: some Collection<Int>, direction: SortDirection) -> [Int] {
    let descending = direction == .descending
    // Ties keep the order they came in (a window's keys sort one after another, last first).
    var keyed = range.enumerated().filter { !isNull[$0.element] }
    keyed.sort { a, b in
      let (x, y) = (prefixes[a.element], prefixes[b.element])
      if x != y { return (x < y) != descending }
      return a.offset < b.offset
    }
    return keyed.map(\.element) + range.filter { isNull[$0] }
  }

  /// The positions placed by a counting sort of their ranks (two passes), nulls last: ranks in
  /// a dictionary are fewer than 65,536.
  ///
  /// Many positions are cut in a part per core: each
  /// part's ranks counted on its core, then its positions placed on its core after the same
  /// rank's positions of the parts before it.
  private func countingOrder(of range: some Collection<Int>, direction: SortDirection, ranks: Int) -> [Int] {
    let positions = Array(range)
    let descending = direction == .descending
    let (isNull, prefixes) = (isNull, prefixes)
    // Nulls go into the last bucket; in descending order a rank r goes into ranks - r.
    @Sendable @inline(__always) func bucket(_ position: Int) -> Int {
      if isNull[position] { return ranks + 1 }
      let rank = Int(prefixes[position])
      return descending ? ranks - rank : rank
    }
    let parts = Morsels.parts(of: positions.count, minimum: SortBuffers.entriesPerPart)
    let bounds = Morsels.evenBoundaries(of: positions.count, parts: parts)
    let counts = SlotArray<[Int]>(count: parts)
    @Sendable func count(_ part: Int) {
      var made = [Int](repeating: 0, count: ranks + 2)
      for k in bounds[part]..<bounds[part + 1] { made[bucket(positions[k])] += 1 }
      counts[part] = made
    }
    if parts == 1 {
      count(0)
    } else if (try? Morsels.run(parts: parts, count)) == nil {
      return positions
    }
    // Where each part's positions of each rank go: after every lower rank's, and after the
    // same rank's of the parts before it.
    var starts = (0..<parts).map { counts[$0] ?? [] }
    var total = 0
    for b in 0..<ranks + 2 {
      for part in 0..<parts {
        let count = starts[part][b]
        starts[part][b] = total
        total += count
      }
    }
    return [Int](unsafeUninitializedCapacity: positions.count) { order, initialized in
      guard let base = order.baseAddress else { return }
      let shared = SharedPositions(base: base)
      let places = starts
      @Sendable func place(_ part: Int) {
        var next = places[part]
        for k in bounds[part]..<bounds[part + 1] {
          let b = bucket(positions[k])
          shared.base[next[b]] = positions[k]
          next[b] += 1
        }
      }
      if parts == 1 {
        place(0)
      } else if (try? Morsels.run(parts: parts, place)) == nil {
        // ^C: an order cut short (the caller checks), every element still written.
        for k in positions.indices { order[k] = positions[k] }
      }
      initialized = positions.count
    }
  }
}
