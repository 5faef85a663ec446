import DataSourceKit
import Foundation

// Positions sorted by 64-bit keys, stably, on every core (`ColumnSortKeys` makes the keys).
//
// A large sort is cut in a part per core, each radix sorted on its own core, and the sorted
// parts are merged pairwise, each merge cut at even places of its output (found by a binary
// search in both inputs, the "merge path") so that every core merges a share. Texts that tie in
// their first bytes are sorted by their next bytes a run of ties at a time, the runs shared out
// among the cores. A part per core, as DuckDB sorts: a `sort by score` over 1M rows was a
// single core's radix passes.

/// A position and the part of its key being sorted on.
struct SortEntry {
  /// The prefix, or for text that ties, its next eight bytes.
  var key: UInt64
  var position: Int
}

/// The entries of a sort and a scratch buffer as long.
///
/// `@unchecked Sendable`: the parts of a sort run on other threads, each reading and writing
/// ranges of the two buffers that no other part touches at the same time; the buffers outlive
/// the parts (``Morsels/run(parts:_:)`` returns when every part is done).
struct SortBuffers: @unchecked Sendable {
  let entries: UnsafeMutableBufferPointer<SortEntry>
  let scratch: UnsafeMutableBufferPointer<SortEntry>

  /// Fewer entries than this are sorted on one core: a thread costs more than it saves.
  static let entriesPerPart = 1 << 16

  /// Sorts the entries by key, stably (equal keys keep the order they are in).
  ///
  /// Stopped by ^C (``Morsels/partStopped``), the order is left cut short: the caller checks.
  func sortByKey() {
    let n = entries.count
    let parts = Morsels.parts(of: n, minimum: Self.entriesPerPart)
    guard parts > 1 else { return Self.radixSort(entries, scratch: scratch) }
    var runs = Morsels.evenBoundaries(of: n, parts: parts)
    let bounds = runs
    guard
      (try? Morsels.run(parts: parts) { part in
        let range = bounds[part]..<bounds[part + 1]
        Self.radixSort(
          UnsafeMutableBufferPointer(rebasing: entries[range]),
          scratch: UnsafeMutableBufferPointer(rebasing: scratch[range]))
      }) != nil
    else { return }
    var (from, to) = (entries, scratch)
    while runs.count > 2 {
      // Each pair of sorted runs merged from `from` into `to`, each merge cut in a piece per
      // core; a last run without a pair is a merge with nothing.
      var merged = [runs[0]]
      var pieces: [(left: Range<Int>, right: Range<Int>, output: Int)] = []
      for pair in stride(from: 0, to: runs.count - 1, by: 2) {
        let left = runs[pair]..<runs[pair + 1]
        let right =
          pair + 2 < runs.count ? runs[pair + 1]..<runs[pair + 2] : left.upperBound..<left.upperBound
        let length = left.count + right.count
        let cuts = Morsels.evenBoundaries(of: length, parts: max(1, min(parts, length / 4_096)))
        let shares = cuts.map { Self.leftShare(ofFirst: $0, from, left: left, right: right) }
        for piece in 0..<cuts.count - 1 {
          pieces.append(
            (
              left.lowerBound + shares[piece]..<left.lowerBound + shares[piece + 1],
              right.lowerBound + cuts[piece] - shares[piece]..<right.lowerBound + cuts[piece + 1]
                - shares[piece + 1],
              left.lowerBound + cuts[piece]
            ))
        }
        merged.append(right.upperBound)
      }
      // Read from `entries`, written into `scratch`: this round's `from` and `to`.
      let (source, work) = (SortBuffers(entries: from, scratch: to), pieces)
      guard
        (try? Morsels.run(parts: work.count) { piece in
          let (left, right, output) = work[piece]
          guard let target = source.scratch.baseAddress else { return }
          Self.merge(
            UnsafeMutableBufferPointer(rebasing: source.entries[left]),
            UnsafeMutableBufferPointer(rebasing: source.entries[right]),
            into: target + output)
        }) != nil
      else { return }
      swap(&from, &to)
      runs = merged
    }
    if from.baseAddress != entries.baseAddress {
      _ = entries.update(fromContentsOf: from)
    }
  }

  /// How many of the first `k` entries of the stable merge of two sorted runs of `buffer` come
  /// from `left` (of equal keys, the left's go first).
  private static func leftShare(
    ofFirst k: Int, _ buffer: UnsafeMutableBufferPointer<SortEntry>, left: Range<Int>, right: Range<Int>
  ) -> Int {
    var low = max(0, k - right.count)
    var high = min(k, left.count)
    while low < high {
      let i = (low + high) / 2
      let j = k - i
      // Too few from the left while its next entry goes before the right's last one taken.
      if j > 0, buffer[left.lowerBound + i].key <= buffer[right.lowerBound + j - 1].key {
        low = i + 1
      } else {
        high = i
      }
    }
    return low
  }

  /// Merges two sorted runs into `output`, stably (of equal keys, the left's first).
  private static func merge(
    _ left: UnsafeMutableBufferPointer<SortEntry>, _ right: UnsafeMutableBufferPointer<SortEntry>,
    into output: UnsafeMutablePointer<SortEntry>
  ) {
    var (i, j, o) = (0, 0, 0)
    while i < left.count, j < right.count {
      if left[i].key <= right[j].key {
        output[o] = left[i]
        i += 1
      } else {
        output[o] = right[j]
        j += 1
      }
      o += 1
    }
    while i < left.count {
      output[o] = left[i]
      i += 1
      o += 1
    }
    while j < right.count {
      output[o] = right[j]
      j += 1
      o += 1
    }
  }

  /// Sorts entries by key, stably: eight passes of a byte each at most, a pass skipped where
  /// every key has the same byte.
  static func radixSort(
    _ entries: UnsafeMutableBufferPointer<SortEntry>, scratch: UnsafeMutableBufferPointer<SortEntry>
  ) {
    let n = entries.count
    guard n > 1 else { return }
    var counts = [Int](repeating: 0, count: 8 * 256)
    counts.withUnsafeMutableBufferPointer { counts in
      for entry in entries {
        for digit in 0..<8 {
          counts[digit << 8 | Int(truncatingIfNeeded: entry.key >> (digit << 3)) & 0xFF] += 1
        }
      }
    }
    var (from, to) = (entries, scratch)
    var next = [Int](repeating: 0, count: 256)
    for digit in 0..<8 {
      // ^C: sorting ten million keys takes seconds in a debug build. (A small sort, one of many
      // runs of ties, does not ask: the asking would cost more than the pass.)
      if n >= 4_096, Morsels.partStopped { return }
      let shift = UInt64(digit << 3)
      // Every key has the same byte here: the pass would change nothing.
      if counts[digit << 8 | Int(truncatingIfNeeded: from[0].key >> shift) & 0xFF] == n { continue }
      var total = 0
      for byte in 0..<256 {
        next[byte] = total
        total += counts[digit << 8 | byte]
      }
      for entry in from {
        let byte = Int(truncatingIfNeeded: entry.key >> shift) & 0xFF
        to[next[byte]] = entry
        next[byte] += 1
      }
      swap(&from, &to)
    }
    if from.baseAddress != entries.baseAddress {
      _ = entries.update(fromContentsOf: from)
    }
  }
}

/// Where a counting sort's parts write the positions they place.
///
/// `@unchecked Sendable`: each part writes places no other part writes.
struct SharedPositions: @unchecked Sendable {
  let base: UnsafeMutablePointer<Int>
}

/// Text keys whose first bytes tie, sorted by the rest of their bytes, read through pointers
/// while ``ColumnSortKeys`` holds their arrays.
///
/// `@unchecked Sendable`: read only, by the parts of one sort, while the arrays are held.
struct SortTexts: @unchecked Sendable {
  let bytes: UnsafeBufferPointer<UInt8>
  /// Where each position's text starts; the next start is its end.
  let starts: UnsafeBufferPointer<Int>
  /// All ones for a descending sort.
  let flip: UInt64

  /// A run of ties this short is sorted by comparing the texts: a radix sort's counts cost
  /// more than the comparisons.
  static let comparedRun = 24

  private func length(_ position: Int) -> Int { starts[position + 1] - starts[position] }

  /// Bytes `offset..<offset + 8` of a text, big-endian, zeros past its end.
  private func word(_ position: Int, at offset: Int) -> UInt64 {
    let start = starts[position] + offset
    let count = min(8, max(0, starts[position + 1] - start))
    guard let base = bytes.baseAddress else { return flip }
    var word: UInt64 = 0
    if start + 8 <= bytes.count {
      // Eight bytes read at once, the ones past the text (the next text's) masked off.
      word = UInt64(bigEndian: UnsafeRawPointer(base + start).loadUnaligned(as: UInt64.self))
      if count < 8 { word = count == 0 ? 0 : word & ~(UInt64.max >> UInt64(count * 8)) }
    } else {
      for k in 0..<8 { word = word << 8 | UInt64(k < count ? base[start + k] : 0) }
    }
    return word ^ flip
  }

  /// Whether the text at `a` goes after the text at `b`, both compared from byte `offset` on:
  /// by their bytes, then the shorter first (reversed when descending); equal texts do not.
  private func goesAfter(_ a: Int, _ b: Int, from offset: Int) -> Bool {
    let (la, lb) = (max(0, length(a) - offset), max(0, length(b) - offset))
    guard let base = bytes.baseAddress else { return false }
    let order =
      min(la, lb) == 0 ? 0 : memcmp(base + starts[a] + offset, base + starts[b] + offset, min(la, lb))
    // Alike up to the shorter one's end: the shorter first. (The whole lengths: texts that tie
    // in bytes zero-padded, "ab" and "ab\0", may both end before `offset`.)
    if order == 0 && length(a) == length(b) { return false }
    let after = order != 0 ? order > 0 : length(a) > length(b)
    return after != (flip != 0)
  }

  /// Sorts each run of entries whose texts agree in their first `sortedBytes` bytes (zeros
  /// past the end) by the rest of their bytes; the runs are shared out among the cores.
  func sortTies(_ buffers: SortBuffers, sortedBytes: Int) {
    let entries = buffers.entries
    var runs: [Range<Int>] = []
    var start = 0
    while start < entries.count {
      var end = start + 1
      while end < entries.count, entries[end].key == entries[start].key { end += 1 }
      if end - start > 1 { runs.append(start..<end) }
      start = end
    }
    let tied = runs.reduce(0) { $0 + $1.count }
    let parts = Morsels.parts(of: tied, minimum: SortBuffers.entriesPerPart)
    guard parts > 1 else { return sortRuns(runs[...], buffers, sortedBytes: sortedBytes) }
    // Runs next to each other, about as many entries to a part.
    var groups: [ArraySlice<Range<Int>>] = []
    var first = 0
    var taken = 0
    for (index, run) in runs.enumerated() {
      taken += run.count
      if taken * parts >= tied * (groups.count + 1) || index == runs.count - 1 {
        groups.append(runs[first...index])
        first = index + 1
      }
    }
    let shared = groups
    try? Morsels.run(parts: shared.count) { part in
      sortRuns(shared[part], buffers, sortedBytes: sortedBytes)
    }
  }

  /// Sorts runs of ties and the runs their next bytes leave tied, until the texts differ or end.
  ///
  /// The runs still tied after each eight bytes are kept in a list, not sorted by a call within
  /// a call: texts that share a prefix of a megabyte would be 125,000 calls deep, past the
  /// stack's end.
  private func sortRuns(_ runs: ArraySlice<Range<Int>>, _ buffers: SortBuffers, sortedBytes: Int) {
    let (entries, scratch) = (buffers.entries, buffers.scratch)
    var tied = runs.map { (range: $0, sortedBytes: sortedBytes) }
    while let (range, sorted) = tied.popLast() {
      if Morsels.partStopped { return }
      let run = UnsafeMutableBufferPointer(rebasing: entries[range])
      guard sortRun(run, scratch: UnsafeMutableBufferPointer(rebasing: scratch[range]), sortedBytes: sorted)
      else { continue }
      var start = range.lowerBound
      while start < range.upperBound {
        var end = start + 1
        while end < range.upperBound, entries[end].key == entries[start].key { end += 1 }
        if end - start > 1 { tied.append((start..<end, sorted + 8)) }
        start = end
      }
    }
  }

  /// Sorts a run of tied entries by their texts' next eight bytes.
  ///
  /// A short run is sorted by its whole texts.
  ///
  /// - Returns: whether some texts go on past those bytes (then runs may still be tied).
  private func sortRun(
    _ run: UnsafeMutableBufferPointer<SortEntry>, scratch: UnsafeMutableBufferPointer<SortEntry>,
    sortedBytes: Int
  ) -> Bool {
    if run.count <= Self.comparedRun {
      // Insertion, stable: an entry moves only past texts that go after it.
      for i in 1..<run.count {
        let entry = run[i]
        var j = i
        while j > 0, goesAfter(run[j - 1].position, entry.position, from: sortedBytes) {
          run[j] = run[j - 1]
          j -= 1
        }
        run[j] = entry
      }
      return false
    }
    var ended = true
    var sameLength = true
    let firstLength = length(run[0].position)
    for i in run.indices {
      let length = length(run[i].position)
      if length > sortedBytes { ended = false }
      if length != firstLength { sameLength = false }
      run[i].key = word(run[i].position, at: sortedBytes)
    }
    if ended {
      // Equal but for zero bytes at the end: the shorter text first (last, descending);
      // texts alike keep the order they came in (a sort by several keys sorts by each in
      // turn, and relies on it).
      if !sameLength {
        let descending = flip != 0
        let lengths = run.map { length($0.position) }
        let order = run.indices.sorted { a, b in
          lengths[a] != lengths[b] ? (lengths[a] < lengths[b]) != descending : a < b
        }
        let entries = order.map { run[$0] }
        for (index, entry) in entries.enumerated() { run[run.startIndex + index] = entry }
      }
      return false
    }
    SortBuffers.radixSort(run, scratch: scratch)
    return true
  }
}
