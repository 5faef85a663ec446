import DataSourceKit
import DataSourceKitValues
import Foundation

/// Rows of a Parquet file, stored by column, in one section.
public final class ParquetProvider: DataProvider, CompositionNode, RecordProviding, FieldProfiling {
  /// The file, as given.
  public let path: String
  /// The path as the user wrote it, for messages and `describe`.
  public let displayPath: String
  private let loads = LoadTracker()
  /// Where loading stands.
  public var loadState: LoadState { loads.state }
  /// Moves with every load: the rows change only then.
  public var structureClock: StructureClock { loads.clock }
  /// What went wrong in the last load, when it failed.
  public private(set) var lastError: DataSourceError?
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { lastError?.description }
  private var table: ColumnTable?
  private var profiles: [FieldProfile]?
  private let access: FileAccess?
  /// The nested columns the last load left out, each `name (a list)`.
  public private(set) var leftOut: [String] = []

  /// A provider of the rows of the Parquet file at `path`.
  ///
  /// - Parameters:
  ///   - displayPath: the path as written, when `path` was resolved against a folder.
  ///   - access: which files may be read, checked on the file opened at every load.
  public init(path: String, displayPath: String? = nil, access: FileAccess? = nil) {
    self.path = path
    self.displayPath = displayPath ?? path
    self.access = access
  }

  /// Reads the whole file; on failure the provider is in `error`, with no items.
  public func load() async throws {
    try await loads.load(
      { try ParquetReader.read(fileAt: path, displayPath: displayPath, access: access) },
      isEmpty: { $0.table.rowCount == 0 },
      apply: { read in
        table = read.table
        leftOut = read.leftOut
        profiles = read.table.profiles
        lastError = nil
      },
      fail: { error in
        table = nil
        leftOut = []
        profiles = nil
        lastError = error
      })
  }

  /// The number of sections.
  public var numberOfSections: Int { 1 }
  /// The number of items in a section.
  public func numberOfItems(inSection section: Int) -> Int { table?.rowCount ?? 0 }
  /// The item at an index path.
  public func item(at itemPath: ItemPath) -> Value {
    guard let table else { return .null }
    return .record(table.record(at: itemPath.item))
  }
  /// The fields every item has, once read.
  package var knownFields: [String]? { table.map { Array($0.schema.names) } }
  /// The columns' types and nulls, once read.
  package var fieldProfiles: [FieldProfile]? { profiles }
  /// How `describe` names this node.
  package var nodeTitle: String { "parquet \(JSONWriter.quoted(displayPath))" }
  /// What `describe` shows beside the name: counts and state.
  package var nodeDetail: String? { countsDetail }
}

extension ParquetProvider: ColumnReadable {
  package func fieldBatches(_ name: String) -> BatchReader? { table?.fieldBatches(name) }
}

extension ParquetProvider: ReadsAFile {
  /// The nested columns the last load left out.
  package var leftOutNotes: [String] {
    guard !leftOut.isEmpty else { return [] }
    let names =
      leftOut.count == 1
      ? leftOut[0] : leftOut.dropLast().joined(separator: ", ") + " and " + (leftOut.last ?? "")
    return [
      "\(names) left out: dsh does not read nested columns yet (DuckDB reads them; it can write the file again with them unnested)"
    ]
  }
}
