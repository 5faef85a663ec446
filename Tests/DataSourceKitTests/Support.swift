import Foundation

@testable import DataSourceKit
@testable import DataSourceKitFiles
@testable import DataSourceKitValues

/// Writes `text` to a new temporary file and returns its path.
func temporaryFile(_ text: String, suffix: String = ".csv") throws -> String {
  let path = NSTemporaryDirectory() + "dsk-\(UUID().uuidString)\(suffix)"
  try text.write(toFile: path, atomically: true, encoding: .utf8)
  return path
}

func loadedCSV(_ text: String, delimiter: Character = ",") async throws -> CSVProvider {
  let provider = CSVProvider(path: try temporaryFile(text), delimiter: delimiter.asciiValue ?? 44)
  try await provider.load()
  return provider
}

extension DataProvider {
  /// Every item, section by section.
  var allItems: [[Item]] {
    (0..<numberOfSections).map { s in
      (0..<numberOfItems(inSection: s)).map { item(at: ItemPath(item: $0, section: s)) }
    }
  }
}

func record(_ pairs: KeyValuePairs<String, Value>) -> Value {
  .record(Record(pairs.map { ($0.key, $0.value) }))
}

/// SplitMix64: a seeded generator, so a failing randomized test names a seed that reproduces it.
struct SplitMix64: RandomNumberGenerator {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
  mutating func next(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &self) }
  mutating func pick<T>(_ items: [T]) -> T { items[next(items.count)] }
}
