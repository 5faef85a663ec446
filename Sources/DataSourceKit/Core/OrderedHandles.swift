import Synchronization

/// A sequence of item handles (distinct ints) where a position and a handle's position are both
/// found, and a handle inserted or removed, in O(log n + B): the handles sit in blocks of at
/// most 2B (B = 512), a Fenwick tree over the blocks' sizes finds the block holding a position,
/// and a map from handle to block finds a handle.
///
/// This is what lets an edit of k items cost O(k log n) through every stage of a view: an array
/// of positions shifts every later position on an insert (8 MB moved per edit at 1M rows) and
/// finds a handle by scanning.
///
/// Copies are cheap until written: the blocks and the handle map are paged arrays of arrays
/// (``PagedArray``), so the first change after a copy (a view's baseline keeps one) copies a
/// page of references, O(n/B) ints of the tree and block order, and the one block it touches,
/// not the whole sequence.
///
/// The handle map is made on demand: until the scans have read four times as many handles as
/// the sequence holds, one is found by reading the blocks in order (O(n), but sequential),
/// since writing the map is a random write per handle. A stage's first edit after the view was built (the shell's first
/// `update`) looks for one handle, and a 750,000-handle map cost more than the rest of the
/// edit; the map is made a dozen edits later, so that no one edit pays for it.
@usableFromInline
package struct OrderedHandles: Sendable {
  private static let blockSize = 512
  /// Handles per chunk of the handle map: a write after a copy (every edit after a snapshot)
  /// copies one chunk, 4 KB.
  private static let mapChunk = 1024
  private static let mapChunkShift = 10

  /// Block storage, by block id.
  private var blocks = PagedArray<[Int]>()
  /// Block ids in sequence order.
  private var order: [Int] = []
  /// Each block's place in `order`, by block id.
  private var slotOfBlock: [Int] = []
  /// A Fenwick tree of the blocks' sizes, by slot (1-based).
  private var tree: [Int] = [0]
  /// The block of each handle (-1: absent), in chunks of `mapChunk` handles, once made.
  private var blockOfHandle = PagedArray<[Int32]>()
  /// Whether `blockOfHandle` holds every handle; until then handles are found by a scan.
  private var mapIsMade = false
  /// How many handles scans have read (shared by copies: it only says when to make the map).
  private let scans = ScanCount()
  @usableFromInline private(set) var count = 0
  /// Set while the sequence is `0..<count` and nothing is stored: what an editable table's
  /// items are until the first edit (a range of trillions has a snapshot without a block).
  private var isIdentity = false

  /// The handles `0..<count`, stored only when first changed.
  package init(identity count: Int) {
    self.count = count
    isIdentity = true
  }

  /// Stores the identity sequence before its first change.
  private mutating func materialize() {
    guard isIdentity else { return }
    isIdentity = false
    let total = count
    count = 0
    var block: [Int] = []
    var start = 0
    while start < total || blocks.isEmpty {
      block = Array(start..<min(start + Self.blockSize, total))
      appendBlock(block)
      start += Self.blockSize
    }
    rebuildTree()
  }

  /// The handles of `runs`, one after the other, cut into blocks straight from the arrays (a
  /// stage's sections become its sequence on its first edit: 750,000 handles through a lazy
  /// flattened sequence took three times as long).
  package init(concatenating runs: [[Int]]) {
    var block: [Int] = []
    block.reserveCapacity(Self.blockSize)
    for run in runs {
      var start = 0
      while start < run.count {
        let take = min(Self.blockSize - block.count, run.count - start)
        block.append(contentsOf: run[start..<start + take])
        start += take
        if block.count == Self.blockSize {
          appendBlock(block)
          block.removeAll(keepingCapacity: true)
        }
      }
    }
    if !block.isEmpty || blocks.isEmpty { appendBlock(block) }
    rebuildTree()
  }

  /// The handles of an array, cut into blocks straight from it (the generic form below steps
  /// through an iterator the runtime describes, a third of the time at 100k handles).
  @usableFromInline
  package init(_ handles: [Int]) { self.init(concatenating: [handles]) }

  package init(_ handles: some Collection<Int>) {
    var block: [Int] = []
    block.reserveCapacity(Self.blockSize)
    for handle in handles {
      block.append(handle)
      if block.count == Self.blockSize {
        appendBlock(block)
        block.removeAll(keepingCapacity: true)
      }
    }
    if !block.isEmpty || blocks.isEmpty { appendBlock(block) }
    rebuildTree()
  }

  private mutating func appendBlock(_ handles: [Int]) {
    let id = blocks.count
    blocks.append(handles)
    slotOfBlock.append(order.count)
    order.append(id)
    count += handles.count
  }

  /// Makes the handle map once scans have read four times as many handles as there are.
  ///
  /// An edit looks a few times per stage (a diff finds an inserted handle in the new sequence
  /// and a removed one in the old). As a renter buys once the rent paid would have bought: a
  /// sequential read of a handle costs about a quarter of the map's random write of it, so
  /// scans stop when they have cost what the map costs (about eight lookups of handles
  /// anywhere, more of handles near the front), and no edit pays more than twice its share.
  private mutating func makeMapIfAsked() {
    guard !mapIsMade, scans.value >= 4 * max(count, Self.blockSize) else { return }
    mapIsMade = true
    for (id, block) in blocks.enumerated() {
      for handle in block { setBlock(id, of: handle) }
    }
  }

  private mutating func setBlock(_ block: Int, of handle: Int) {
    guard mapIsMade else { return }
    // A shift and a mask, not a division: this runs once per handle when a sequence is made.
    let (chunk, offset) = (handle >> Self.mapChunkShift, handle & (Self.mapChunk - 1))
    while blockOfHandle.count <= chunk { blockOfHandle.append([Int32](repeating: -1, count: Self.mapChunk)) }
    blockOfHandle[chunk][offset] = Int32(block)
  }

  private func block(of handle: Int) -> Int? {
    guard handle >= 0 else { return nil }
    guard mapIsMade else {
      var read = 0
      defer { scans.add(read) }
      for (id, block) in blocks.enumerated() {
        if block.contains(handle) {
          read += (block.firstIndex(of: handle) ?? 0) + 1
          return id
        }
        read += block.count
      }
      return nil
    }
    let (chunk, offset) = handle.quotientAndRemainder(dividingBy: Self.mapChunk)
    guard chunk < blockOfHandle.count else { return nil }
    let block = Int(blockOfHandle[chunk][offset])
    return block < 0 ? nil : block
  }

  private mutating func rebuildTree() {
    tree = [Int](repeating: 0, count: order.count + 1)
    for (slot, id) in order.enumerated() {
      var i = slot + 1
      let size = blocks[id].count
      while i < tree.count {
        tree[i] += size
        i += i & -i
      }
    }
  }

  private mutating func add(_ delta: Int, atSlot slot: Int) {
    var i = slot + 1
    while i < tree.count {
      tree[i] += delta
      i += i & -i
    }
  }

  /// How many handles the blocks before `slot` hold.
  private func handlesBefore(slot: Int) -> Int {
    var i = slot
    var sum = 0
    while i > 0 {
      sum += tree[i]
      i -= i & -i
    }
    return sum
  }

  /// The slot holding `position` and the position's offset in its block; for `position ==
  /// count`, the end of the last block.
  private func locate(_ position: Int) -> (slot: Int, offset: Int) {
    var slot = 0
    var remaining = position
    var step = 1
    while step * 2 < tree.count { step *= 2 }
    while step > 0 {
      let next = slot + step
      if next < tree.count, tree[next] <= remaining {
        slot = next
        remaining -= tree[next]
      }
      step /= 2
    }
    // `slot` blocks hold at most `position` handles; empty blocks after them are skipped.
    if slot >= order.count { return (order.count - 1, blocks[order[order.count - 1]].count) }
    return (slot, remaining)
  }

  /// The handle at `position`.
  package subscript(position: Int) -> Int {
    precondition(position >= 0 && position < count, "position \(position) outside 0..<\(count)")
    if isIdentity { return position }
    let (slot, offset) = locate(position)
    return blocks[order[slot]][offset]
  }

  /// Where `handle` is, or `nil` when it is not in the sequence.
  package func position(of handle: Int) -> Int? {
    if isIdentity { return handle >= 0 && handle < count ? handle : nil }
    guard let id = block(of: handle), let offset = Self.offset(of: handle, in: blocks[id]) else { return nil }
    return handlesBefore(slot: slotOfBlock[id]) + offset
  }

  /// Where `handle` is in a block, eight handles compared at a time (a loop that stops at the
  /// first match is not vectorized, and a lookup reads half a block on average: most of a
  /// sorted stage's binary search over a million items).
  private static func offset(of handle: Int, in block: [Int]) -> Int? {
    block.withUnsafeBufferPointer { block in
      let wanted = SIMD8<Int>(repeating: handle)
      var start = 0
      while start + 8 <= block.count {
        let eight = UnsafeRawBufferPointer(block).loadUnaligned(
          fromByteOffset: start * MemoryLayout<Int>.stride, as: SIMD8<Int>.self)
        if any(eight .== wanted) {
          for offset in start..<start + 8 where block[offset] == handle { return offset }
        }
        start += 8
      }
      for offset in start..<block.count where block[offset] == handle { return offset }
      return nil
    }
  }

  /// Whether the item of `handle` stands before `position`; `nil` when the handle is not here.
  ///
  /// The handle's block is found through the map, as ``position(makingMapOf:)`` finds it, but
  /// the block is read only when `position` is in the same one: a stage placing an item by
  /// halving its section asks this of handles mostly blocks apart, and reading half a block
  /// for each was most of the search at a million items.
  package mutating func handle(_ handle: Int, precedes position: Int) -> Bool? {
    // The identity stores no blocks, and no map to make.
    if isIdentity { return handle >= 0 && handle < count ? handle < position : nil }
    makeMapIfAsked()
    guard let id = block(of: handle) else { return nil }
    let slot = slotOfBlock[id]
    let target = locate(position)
    if slot != target.slot { return slot < target.slot }
    guard let offset = Self.offset(of: handle, in: blocks[id]) else { return nil }
    return offset < target.offset
  }

  /// Whether handles are found through the map (else by reading the blocks).
  package var handleMapIsMade: Bool { mapIsMade }

  /// ``position(of:)`` for the holder of the sequence (a provider's own order, not a snapshot's
  /// copy), which makes the handle map once scans have paid for it.
  ///
  /// Only an edit made the map, so a sequence looked up between edits and not edited after
  /// (a table after one delete, read for a view's changes) scanned for every lookup:
  /// `changes` after a delete and an update of 28,572 items of 200,000 took 9.7 s.
  package mutating func position(makingMapOf handle: Int) -> Int? {
    makeMapIfAsked()
    return position(of: handle)
  }

  /// Where each of `handles` is (`nil` for one not in the sequence), in their order.
  ///
  /// Without the map, many handles are found by one pass over the sequence, not a scan each:
  /// the diff of a bulk replacement looks for thousands at once, on a copy that makes no map.
  ///
  /// - Complexity: O(k log n + kB) with the map, else O(n + k) for more than a few handles.
  @usableFromInline
  package func positions(of handles: [Int]) -> [Int?] {
    guard !isIdentity, !mapIsMade, handles.count > 8 else { return handles.map { position(of: $0) } }
    if handles.count >= count / 8, let top = handles.max(), top >= 0, top < 4 * count + Self.blockSize {
      // Many of the handles (a whole new list matched against the old one): every position is
      // written to a table by handle as the blocks are read, with no hashing.
      var positionOfHandle = [Int](repeating: -1, count: top + 1)
      var start = 0
      for id in order {
        for (offset, handle) in blocks[id].enumerated() where handle <= top {
          positionOfHandle[handle] = start + offset
        }
        start += blocks[id].count
      }
      return handles.map { $0 >= 0 && positionOfHandle[$0] >= 0 ? positionOfHandle[$0] : nil }
    }
    var wanted: [Int: Int] = [:]
    wanted.reserveCapacity(handles.count)
    for handle in handles { wanted[handle] = -1 }
    var start = 0
    var found = 0
    for id in order where found < wanted.count {
      for (offset, handle) in blocks[id].enumerated() where wanted[handle] != nil {
        wanted[handle] = start + offset
        found += 1
      }
      start += blocks[id].count
    }
    return handles.map { handle in wanted[handle].flatMap { $0 < 0 ? nil : $0 } }
  }

  package func contains(_ handle: Int) -> Bool {
    isIdentity ? handle >= 0 && handle < count : block(of: handle) != nil
  }

  package mutating func insert(_ handle: Int, at position: Int) {
    precondition(position >= 0 && position <= count, "position \(position) outside 0...\(count)")
    // Checked in debug builds only: without the map, `contains` reads every block, and the
    // callers insert handles they have just made.
    assert(!contains(handle), "handle \(handle) is in the sequence already")
    materialize()
    makeMapIfAsked()
    let (slot, offset) = locate(position)
    let id = order[slot]
    blocks[id].insert(handle, at: offset)
    setBlock(id, of: handle)
    add(1, atSlot: slot)
    count += 1
    if blocks[id].count > 2 * Self.blockSize { split(slot: slot) }
  }

  @discardableResult
  package mutating func remove(at position: Int) -> Int {
    precondition(position >= 0 && position < count, "position \(position) outside 0..<\(count)")
    materialize()
    makeMapIfAsked()
    let (slot, offset) = locate(position)
    let id = order[slot]
    let handle = blocks[id].remove(at: offset)
    if mapIsMade {
      let (chunk, chunkOffset) = handle.quotientAndRemainder(dividingBy: Self.mapChunk)
      blockOfHandle[chunk][chunkOffset] = -1
    }
    add(-1, atSlot: slot)
    count -= 1
    return handle
  }

  /// Splits a full block in two, the second half in a new block after it.
  private mutating func split(slot: Int) {
    let id = order[slot]
    let half = blocks[id].count / 2
    let moved = Array(blocks[id][half...])
    blocks[id].removeSubrange(half...)
    let newID = blocks.count
    blocks.append(moved)
    for handle in moved { setBlock(newID, of: handle) }
    order.insert(newID, at: slot + 1)
    slotOfBlock.append(0)
    for s in (slot + 1)..<order.count { slotOfBlock[order[s]] = s }
    rebuildTree()
  }

  /// The handles at `positions` (ascending, one after another), read block by block.
  package func handles(in positions: Range<Int>) -> [Int] {
    guard !positions.isEmpty else { return [] }
    if isIdentity { return Array(positions) }
    var result: [Int] = []
    result.reserveCapacity(positions.count)
    var (slot, offset) = locate(positions.lowerBound)
    while result.count < positions.count, slot < order.count {
      let block = blocks[order[slot]]
      let take = min(block.count - offset, positions.count - result.count)
      if take > 0 { result += block[offset..<offset + take] }
      slot += 1
      offset = 0
    }
    return result
  }

  /// Every handle, in order.
  @usableFromInline package var all: [Int] { isIdentity ? Array(0..<count) : order.flatMap { blocks[$0] } }
}

/// A count that copies of a value share (a hint for when to make a cache, not part of the value).
private final class ScanCount: Sendable {
  private let count = Mutex(0)
  var value: Int { count.withLock { $0 } }
  func add(_ handles: Int) { count.withLock { $0 += handles } }
}
