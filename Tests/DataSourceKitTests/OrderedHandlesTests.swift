import Testing

@testable import DataSourceKit
@testable import DataSourceKitValues

/// The order of handles behind edited tables and their stages, against a plain array.
@Suite("Ordered handles")
struct OrderedHandlesTests {
  @Test("lookups alone make an edited table's handle map once their scans have paid for it")
  func lookupsMakeTheMap() {
    let provider = EditableProvider(ArrayProvider(Array(0..<20_000)))
    provider.remove(at: [5])
    #expect(!provider.handleMapIsMade)
    // Handles near the end: each scan reads most of the sequence.
    for handle in (19_900..<20_000).reversed() {
      #expect(provider.position(ofHandle: handle) == handle - 1)
    }
    #expect(provider.handleMapIsMade)
    #expect(provider.position(ofHandle: 5) == nil && provider.position(ofHandle: 6) == 5)
  }

  @Test("a paged array is an array: appends across pages, writes in place, copies that do not share writes")
  func pagedArray() {
    var paged = PagedArray<[Int]>()
    var reference: [[Int]] = []
    for n in 0..<1_000 {
      paged.append([n])
      reference.append([n])
    }
    let copy = paged
    for index in stride(from: 0, to: 1_000, by: 7) {
      paged[index].append(-index)
      reference[index].append(-index)
    }
    #expect(Array(paged) == reference)
    #expect(Array(copy) == (0..<1_000).map { [$0] })
    #expect(paged.count == 1_000 && paged.enumerated().allSatisfy { $0.element.first == $0.offset })
    paged.removeAll()
    #expect(paged.isEmpty && copy.count == 1_000)
  }

  @Test(
    "random inserts, removes, lookups and copies agree with an array", arguments: [0, 700, 5_000] as [Int])
  func randomOperations(start: Int) {
    var random = SplitMix64(state: UInt64(start) &+ 17)
    var handles = start == 0 ? OrderedHandles(identity: 0) : OrderedHandles(0..<start)
    var reference = Array(0..<start)
    var next = start
    var copies: [(OrderedHandles, [Int])] = []
    // Enough inserts in a few places to split blocks many times, and removes to empty some.
    for round in 0..<6_000 {
      if random.next(4) != 0 || reference.isEmpty {
        let position = random.next(3) == 0 ? random.next(reference.count + 1) : min(reference.count, 3)
        handles.insert(next, at: position)
        reference.insert(next, at: position)
        next += 1
      } else {
        let position = random.next(reference.count)
        #expect(handles.remove(at: position) == reference.remove(at: position))
      }
      if round % 500 == 0 { copies.append((handles, reference)) }
      if round % 97 == 0 {
        #expect(handles.count == reference.count)
        #expect(handles.all == reference, "round \(round)")
        for _ in 0..<20 where !reference.isEmpty {
          let position = random.next(reference.count)
          #expect(handles[position] == reference[position])
          #expect(handles.position(of: reference[position]) == position)
        }
        #expect(handles.position(of: next + 5) == nil)
        // Many handles at once (one pass without the map), absent ones among them.
        let asked = (0..<40).map { _ in random.next(next + 10) }
        #expect(handles.positions(of: asked) == asked.map { reference.firstIndex(of: $0) }, "round \(round)")
        if reference.count > 10 { #expect(handles.handles(in: 3..<9) == Array(reference[3..<9])) }
      }
    }
    // Copies kept their contents while the original changed.
    for (copy, contents) in copies {
      #expect(copy.all == contents)
      if let last = contents.last { #expect(copy.position(of: last) == contents.count - 1) }
    }
  }

  @Test("whether a handle precedes a position agrees with its position, in a block or blocks apart")
  func handlePrecedesPosition() {
    var random = SplitMix64(state: 58)
    // Over 512 handles a block: several blocks, empty ones among them after the removals.
    var handles = OrderedHandles(identity: 3_000)
    var model = Array(0..<3_000)
    // The identity order answers without blocks.
    #expect(handles.handle(5, precedes: 6) == true)
    #expect(handles.handle(6, precedes: 6) == false)
    #expect(handles.handle(3_000, precedes: 6) == nil)
    var next = 3_000
    for step in 0..<400 {
      if step % 3 == 0, !model.isEmpty {
        let at = Int.random(in: 0..<model.count, using: &random)
        #expect(handles.remove(at: at) == model.remove(at: at))
      } else {
        let at = Int.random(in: 0...model.count, using: &random)
        handles.insert(next, at: at)
        model.insert(next, at: at)
        next += 1
      }
      for _ in 0..<5 {
        let handle = Int.random(in: -1...next, using: &random)
        let position = Int.random(in: 0...model.count, using: &random)
        let expected = model.firstIndex(of: handle).map { $0 < position }
        #expect(handles.handle(handle, precedes: position) == expected, "step \(step)")
      }
    }
  }

  @Test("the identity order stores nothing until changed")
  func identity() {
    var handles = OrderedHandles(identity: 9_000_000_000_000)
    #expect(handles.count == 9_000_000_000_000)
    #expect(handles[123_456_789_012] == 123_456_789_012)
    #expect(handles.position(of: 42) == 42 && handles.position(of: -1) == nil)
    var small = OrderedHandles(identity: 5)
    small.insert(99, at: 2)
    #expect(small.all == [0, 1, 99, 2, 3, 4])
    handles = small
    #expect(handles.position(of: 3) == 4)
  }
}
