import Foundation

@testable import DataSourceKit

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
