import Testing

@testable import DataSourceKit
@testable import DataSourceKitValues

@Suite("Structure clocks")
struct StructureClockTests {
  @Test("a clock moves its followers once each, however many paths lead to them")
  func followersMoveOnce() {
    let source = StructureClock()
    let left = StructureClock()
    let right = StructureClock()
    let joined = StructureClock()
    left.follow(source)
    right.follow(source)
    joined.follow(left)
    joined.follow(right)
    source.advance()
    #expect([source.current, left.current, right.current, joined.current] == [1, 1, 1, 1])
    left.advance()
    #expect([source.current, left.current, right.current, joined.current] == [1, 2, 1, 2])
  }

  @Test("a follower that is gone is not kept alive nor moved")
  func goneFollowers() {
    let source = StructureClock()
    weak var gone: StructureClock?
    do {
      let follower = StructureClock()
      follower.follow(source)
      gone = follower
    }
    #expect(gone == nil)
    source.advance()
    #expect(source.current == 1)
  }

  @Test("an edit moves the clocks of what is built on it, and of nothing else")
  func editsMoveOnlyTheirOwnSources() async throws {
    let people = EditableProvider(ArrayProvider([Value.int(1), .int(2), .int(3)]))
    let other = EditableProvider(ArrayProvider([Value.int(9)]))
    try await people.load()
    try await other.load()
    let odd = DerivedProvider.filter(people, label: "where odd") {
      if case .int(let n) = $0 { return n % 2 == 1 }
      return false
    }
    try await odd.load()
    let presenter = ClosurePresenter<Value>(style: .basic) { item, _ in item.description }
    let screen = ComposedDataSource([
      TableAdapter(provider: odd, presenter: presenter), TableAdapter(provider: people, presenter: presenter),
    ])
    let elsewhere = ComposedDataSource([TableAdapter(provider: other, presenter: presenter)])
    let before = (odd.structureClock.current, screen.structureClock.current, elsewhere.structureClock.current)

    people.replaceItems([.int(5)])
    #expect(odd.structureClock.current > before.0)
    #expect(screen.structureClock.current > before.1)
    #expect(elsewhere.structureClock.current == before.2)
    #expect(screen.numberOfSections == 2)
    #expect(screen.numberOfRows(inSection: 0) == 1)

    let screenAfterEdit = screen.structureClock.current
    other.replaceItems([])
    #expect(screen.structureClock.current == screenAfterEdit)
    #expect(elsewhere.structureClock.current > before.2)
  }
}
