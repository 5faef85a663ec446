import Testing

@testable import DataSourceKit

/// `sample`: how many items it keeps, that they are the base's in order, that a seed repeats
/// the choice, and that every item is as likely as any other.
@Suite("Sampling")
struct SampleTests {
  func sample(_ items: [Int], _ k: Int, seed: UInt64?) async throws -> [Int] {
    let sampled = DerivedProvider.sampled(
      ArrayProvider(items), label: "sample", count: { _ in k }, seed: seed)
    try await sampled.load()
    return (0..<sampled.numberOfItems(inSection: 0)).map { sampled.item(at: ItemPath(item: $0, section: 0)) }
  }

  @Test("k distinct items of the base, in its order; a seed chooses the same again")
  func keepsOrderAndRepeats() async throws {
    let items = Array(100..<1_100)
    for k in [0, 1, 7, 500, 1_000, 2_000] {
      let chosen = try await sample(items, k, seed: 9)
      #expect(chosen.count == min(k, items.count))
      #expect(chosen == chosen.sorted())
      #expect(Set(chosen).count == chosen.count)
      #expect(Set(chosen).isSubset(of: Set(items)))
      #expect(try await sample(items, k, seed: 9) == chosen)
    }
    #expect(try await sample(items, 10, seed: 1) != sample(items, 10, seed: 2))
  }

  @Test("every item equally likely: 4,000 seeds choosing 1 of 8 and 3 of 8")
  func uniform() async throws {
    for k in [1, 3] {
      var counts = [Int](repeating: 0, count: 8)
      for seed in 0..<4_000 as Range<UInt64> {
        for item in try await sample(Array(0..<8), k, seed: seed) { counts[item] += 1 }
      }
      // Each item is chosen 4,000 · k / 8 times on average; a binomial's spread at that size is
      // about 30 (k = 1) or 42 (k = 3): six of them either way is a broken sampler, not chance.
      let expected = 4_000.0 * Double(k) / 8
      let spread = (4_000.0 * Double(k) / 8 * (1 - Double(k) / 8)).squareRoot()
      for count in counts {
        #expect(abs(Double(count) - expected) < 6 * spread, "counts \(counts)")
      }
    }
  }
}
