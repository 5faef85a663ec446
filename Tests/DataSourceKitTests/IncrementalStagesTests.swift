import Testing

@testable import DataSourceKit
@testable import DataSourceKitFiles
@testable import DataSourceKitValues

/// Stages arranged again item by item after each edit must hold what arranging them whole
/// holds, and the batch worked out from the touched items alone must be one UIKit accepts that
/// turns the old view into the new.
@Suite("Stages kept up to date item by item")
struct IncrementalStagesTests {
  typealias Generator = SplitMix64

  static func randomItem(_ random: inout Generator, id: Int) -> Value {
    record([
      "id": .int(id),
      "g": random.next(6) == 0 ? .null : .string(["a", "b", "c", "d"][random.next(4)]),
      "v": random.next(7) == 0 ? .null : .int(random.next(10)),
    ])
  }

  /// The stages of a chain, by name, as the shell makes them.
  static let chains: [[PushdownStage]] = {
    let filter = PushdownStage.filter(.binary(.field(["v"]), .greater, .literal(.int(3))))
    let sortUp = PushdownStage.sort([SortTerm(expression: .field(["v"]), direction: .ascending)])
    let sortDown = PushdownStage.sort([
      SortTerm(expression: .field(["g"]), direction: .descending),
      SortTerm(expression: .field(["v"]), direction: .ascending),
    ])
    let section = PushdownStage.section(SortTerm(expression: .field(["g"]), direction: .ascending))
    let sectionDown = PushdownStage.section(SortTerm(expression: .field(["v"]), direction: .descending))
    return [
      [], [filter], [sortUp], [section], [.slice(RowSlice(count: 7))], [filter, sortUp, section],
      [section, sortDown],
      [sortUp, .slice(RowSlice(count: 5))], [filter, section, .slice(RowSlice(count: 9))], [section, filter],
      [sectionDown, sortUp, filter],
      [sortDown, section, .slice(RowSlice(count: 12)), filter], [.slice(RowSlice(count: 20)), sortUp],
      [.slice(RowSlice(offset: 3)), filter], [sortUp, .slice(RowSlice(offset: 4, count: 6))],
      [section, .slice(RowSlice(offset: 5, count: 9)), sortDown],
    ]
  }()

  /// Every chain the tests run: `chains`, then `extendedChains`, then `stagesAroundExtend`.
  static let chainCount = chains.count + extendedChains.count + stagesAroundExtend.count

  /// The chains also run over a CSV table's columns: a few plain ones, the slices with an
  /// offset, all but the last extended one, and every chain around an extend.
  static let chainsOverColumns: [Int] =
    [0, 1, 5, 8] + Array(chains.count - 3..<chains.count)
    + Array(chains.count..<chains.count + extendedChains.count - 1)
    + Array(chains.count + extendedChains.count..<chainCount)

  /// Chains over fields computed from the table (`extend w = v * 2, h = g`), by those fields:
  /// the stages read the computed items by the table's handles.
  static let extendedChains: [[PushdownStage]] = {
    let filter = PushdownStage.filter(.binary(.field(["w"]), .greater, .literal(.int(6))))
    let sortUp = PushdownStage.sort([SortTerm(expression: .field(["w"]), direction: .ascending)])
    let section = PushdownStage.section(SortTerm(expression: .field(["h"]), direction: .ascending))
    return [[], [filter], [sortUp, section], [section, filter, .slice(RowSlice(count: 6))]]
  }()

  /// Chains with stages below the `extend` as well: (below, above).
  static let stagesAroundExtend: [([PushdownStage], [PushdownStage])] = {
    let below = PushdownStage.filter(.binary(.field(["v"]), .greater, .literal(.int(1))))
    let sortByID = PushdownStage.sort([SortTerm(expression: .field(["id"]), direction: .descending)])
    let byW = PushdownStage.sort([SortTerm(expression: .field(["w"]), direction: .ascending)])
    let section = PushdownStage.section(SortTerm(expression: .field(["h"]), direction: .ascending))
    let filterW = PushdownStage.filter(.binary(.field(["w"]), .greater, .literal(.int(6))))
    return [
      ([below], [byW]), ([sortByID], [section, .slice(RowSlice(count: 8))]), ([below, section], [byW]),
      ([below], []),
      ([below], [byW, section]), ([sortByID], [filterW, byW]),
    ]
  }()

  static func extended(_ base: any DataProvider<Value>) -> ComputedFieldsProvider {
    ComputedFieldsProvider(
      base: base, label: "extend",
      fields: [
        .init(
          name: "w", expression: .binary(.field(["v"]), .multiply, .literal(.int(2))), type: .int, notes: nil),
        .init(name: "h", expression: .field(["g"]), type: .text, notes: nil),
      ], keepsBaseFields: true)
  }

  /// Chain `chain` over `base`: one of `chains`, or past them one of `extendedChains` over the
  /// computed fields.
  static func build(chain: Int, over base: any DataProvider<Value>) -> any DataProvider<Value> {
    if chain < chains.count { return build(chains[chain], over: base) }
    let extendedChain = chain - chains.count
    if extendedChain < extendedChains.count {
      return build(extendedChains[extendedChain], over: extended(base))
    }
    let (below, above) = stagesAroundExtend[extendedChain - extendedChains.count]
    return build(above, over: extended(build(below, over: base)))
  }

  static func build(_ stages: [PushdownStage], over base: any DataProvider<Value>) -> any DataProvider<Value>
  {
    stages.reduce(base) { base, stage in DerivedProvider.stage(stage, over: base, label: "stage", notes: nil)
    }
  }

  /// What a provider shows: each section's identity and its items.
  static func view(_ provider: any DataProvider<Value>) -> (ids: [Value], items: [[Value]]) {
    (
      (0..<provider.numberOfSections).map { provider.sectionKey($0)?.asValue ?? .int($0) },
      provider.allItems
    )
  }

  @Test(
    "random edits: the stages hold what arranging them whole holds, and the batch replays",
    arguments: Array(0..<IncrementalStagesTests.chainCount), [1, 2, 3, 4, 5] as [UInt64])
  func randomEdits(chain: Int, seed: UInt64) async throws {
    try await Self.randomEdits(chain: chain, seed: seed, overColumns: false)
  }

  @Test(
    "random edits over a CSV table: stages that read its columns by handle hold what arranging whole holds",
    arguments: IncrementalStagesTests.chainsOverColumns, [1, 2] as [UInt64])
  func randomEditsOverColumns(chain: Int, seed: UInt64) async throws {
    try await Self.randomEdits(chain: chain, seed: seed, overColumns: true)
  }

  @Test(
    "stages made over an edited CSV table read its columns by handle: they hold what the same items in memory give",
    arguments: Array(0..<IncrementalStagesTests.chainCount))
  func stagesOverEditedColumns(chain: Int) async throws {
    var random = Generator(state: UInt64(chain) &+ 99)
    let lines = (0..<60).map { id in
      "\(id),\(random.next(5) == 0 ? "" : ["a", "b", "c"][random.next(3)]),\(random.next(6) == 0 ? "" : String(random.next(10)))"
    }
    let csv = try await loadedCSV("id,g,v\n" + lines.joined(separator: "\n") + "\n")
    let root = EditableProvider<Value>(csv, identityKey: "id")
    try await root.load()
    // Handles no longer positions: inserts, removes and moves first.
    for k in 0..<12 {
      root.insert(
        Self.randomItem(&random, id: 100 + k), at: random.next(root.numberOfItems(inSection: 0) + 1))
      root.remove(at: [random.next(root.numberOfItems(inSection: 0))])
      root.move(
        from: random.next(root.numberOfItems(inSection: 0)), to: random.next(root.numberOfItems(inSection: 0))
      )
    }
    let top = Self.build(chain: chain, over: root)
    try await top.load()
    let whole = Self.build(chain: chain, over: ArrayProvider(root.items, knownFields: ["id", "g", "v"]))
    try await whole.load()
    #expect(Self.view(top).ids == Self.view(whole).ids)
    #expect(Self.view(top).items == Self.view(whole).items)
  }

  static func randomEdits(chain: Int, seed: UInt64, overColumns: Bool) async throws {
    var random = Generator(state: UInt64(chain) &* 7919 &+ seed)
    var nextID = 0
    let items = (0..<40).map { _ -> Value in
      defer { nextID += 1 }
      return Self.randomItem(&random, id: nextID)
    }
    let source: any DataProvider<Value>
    if overColumns {
      // The same items as a CSV file: stages read its columns, by handle once it is edited.
      let lines = items.map { item in
        ["id", "g", "v"].map { field -> String in
          switch item.value(atPath: [field]) {
          case .string(let text)?: text
          case .int(let int)?: String(int)
          default: ""
          }
        }.joined(separator: ",")
      }
      let csv = try await loadedCSV("id,g,v\n" + lines.joined(separator: "\n") + "\n")
      #expect(csv.table != nil)
      source = csv
    } else {
      source = ArrayProvider(items, knownFields: ["id", "g", "v"])
    }
    let root = EditableProvider<Value>(source, identityKey: "id")
    let top = Self.build(chain: chain, over: root)
    try await top.load()
    let addressable = try #require(top as? any HandleAddressable<Value>)
    #expect(addressable.tellsItemChanges)
    var checks = 0
    var wholeArrangements = 0
    for _ in 0..<60 {
      let recorder = ChangeRecorder<Value>()
      addressable.addRecorder(recorder)
      let rootRecorder = ChangeRecorder<Value>()
      root.addRecorder(rootRecorder)
      let before = addressable.snapshot()
      let oldView = Self.view(top)
      // One to three edits before the batch is asked for.
      for _ in 0..<(1 + random.next(3)) {
        let count = root.numberOfItems(inSection: 0)
        switch random.next(count == 0 ? 1 : 6) {
        case 0:
          root.insert(Self.randomItem(&random, id: nextID), at: random.next(count + 1))
          nextID += 1
        case 1:
          root.remove(at: (0..<(1 + random.next(3))).map { _ in random.next(count) })
        case 2:
          root.move(from: random.next(count), to: random.next(count))
        default:
          // Now and then most of the items: more than a stage places one by one, so it is arranged
          // whole over an edited table, reading items and columns by handle.
          let touched = random.next(overColumns ? 3 : 12) == 0 ? count : 1 + random.next(3)
          let positions = Set((0..<touched).map { _ in random.next(count) }).sorted()
          root.replace(
            positions.map { position in
              guard case .record(let old) = root.item(at: ItemPath(item: position, section: 0)) else {
                return (position, .null)
              }
              var changed = Self.randomItem(&random, id: 0)
              if case .record(let fresh) = changed {
                changed = record([
                  "id": old["id"] ?? .null, "g": fresh["g"] ?? .null, "v": fresh["v"] ?? .null,
                ])
              }
              return (position, changed)
            }, isEqual: ==)
        }
      }
      // Arranged whole, over the same items.
      let whole = Self.build(chain: chain, over: ArrayProvider(root.items, knownFields: ["id", "g", "v"]))
      try await whole.load()
      let newView = Self.view(top)
      let expected = Self.view(whole)
      #expect(newView.ids == expected.ids, "sections after \(checks) checks, chain \(chain)")
      #expect(newView.items == expected.items, "items after \(checks) checks, chain \(chain)")

      // Arranged whole (most items touched): the view is checked above; there is no batch of
      // touched items to check.
      if !recorder.isComplete {
        wholeArrangements += 1
        checks += 1
        continue
      }
      let after = addressable.snapshot()
      // Whether an item itself changed is the root's to say: a stage may have seen it leave and
      // come back.
      let touched = Dictionary(
        uniqueKeysWithValues: recorder.touched.keys.map { handle in
          (
            handle,
            root.position(ofHandle: handle) != nil
              && rootRecorder.itemsBefore[handle].map { $0 != root.item(forHandle: handle) } ?? false
          )
        })
      let batch = try #require(
        HandleDiff.batch(
          from: before, to: after, touched: touched, oldSectionIDs: oldView.ids, newSectionIDs: newView.ids))
      #expect(recorder.isComplete)
      #expect(throws: Never.self) {
        try batch.validate(before: oldView.items.map(\.count), after: newView.items.map(\.count))
      }
      if (try? batch.validate(before: oldView.items.map(\.count), after: newView.items.map(\.count))) != nil {
        #expect(
          batch.apply(to: oldView.items, new: newView.items) == newView.items,
          "replay, chain \(chain) seed \(seed) check \(checks): \(batch) touched \(recorder.touched) old \(oldView.items.map { $0.map { ($0.value(atPath: ["id"]) ?? .null).literalText } }) new \(newView.items.map { $0.map { ($0.value(atPath: ["id"]) ?? .null).literalText } })"
        )
      }
      checks += 1
    }
    #expect(checks == 60)
    // Most rounds are placed item by item (over columns a third are made to be arranged whole).
    #expect(wholeArrangements < (overColumns ? 45 : 20), "\(wholeArrangements) of 60 rounds arranged whole")
  }

  @Test("an edit of one row among 100,000 touches one row in every stage")
  func oneEditTouchesOne() async throws {
    let items = (0..<100_000).map {
      record(["id": .int($0), "g": .string(["a", "b", "c"][$0 % 3]), "v": .int($0 % 97)])
    }
    let root = EditableProvider<Value>(
      ArrayProvider(items, knownFields: ["id", "g", "v"]), identityKey: "id")
    let top = Self.build(Self.chains[5], over: root)
    try await top.load()
    let addressable = try #require(top as? any HandleAddressable<Value>)
    let recorder = ChangeRecorder<Value>()
    addressable.addRecorder(recorder)
    let position = try #require(root.position(ofHandle: 500))
    root.replace([(position, record(["id": .int(500), "g": .string("c"), "v": .int(50)]))], isEqual: ==)
    #expect(recorder.touched == [500: true])
    #expect(recorder.isComplete)
  }

  @Test("a lookup by key finds what a scan finds, through inserts, deletes, key changes and repeats")
  func keyIndex() async throws {
    var random = Generator(state: 99)
    let items = (0..<300).map { record(["id": .int($0), "v": .int($0 % 7)]) }
    let root = EditableProvider<Value>(ArrayProvider(items, knownFields: ["id", "v"]), identityKey: "id")
    try await root.load()
    func scan(_ key: Value) -> [Int] {
      root.allItems[0].indices.filter { root.allItems[0][$0].value(atPath: ["id"]) == key && !key.isNull }
    }
    for round in 0..<400 {
      let count = root.numberOfItems(inSection: 0)
      switch random.next(4) {
      case 0: root.insert(record(["id": .int(1_000 + round), "v": .int(1)]), at: random.next(count + 1))
      case 1: root.remove(at: [random.next(count)])
      case 2: root.move(from: random.next(count), to: random.next(count))
      default:
        // A key changed, now and then to one another item holds.
        let position = random.next(count)
        let key: Value = random.next(10) == 0 ? .int(random.next(300)) : .int(5_000 + round)
        root.replace([(position, record(["id": key, "v": .int(2)]))], isEqual: ==)
      }
      let key: Value = random.next(5) == 0 ? .double(Double(random.next(300))) : .int(random.next(1_400))
      if let found = root.positions(withKey: key) {
        #expect(found == scan(key), "round \(round), key \(key)")
      } else {
        // Repeated keys: the caller scans; there are repeats indeed.
        let keys = root.allItems[0].compactMap { $0.value(atPath: ["id"]) }
        #expect(Set(keys).count < keys.count, "round \(round)")
      }
    }
    #expect(root.positions(withKey: .null) == [] || root.positions(withKey: .null) == nil)
  }
}
