import DataSourceKit
import DataSourceKitValues
import Foundation

/// Rows of a CSV file, stored by column, in one section.
public final class CSVProvider: DataProvider, CompositionNode, RecordProviding, FieldProfiling {
  /// The file, as given.
  public let path: String
  /// The path as the user wrote it, for messages and `describe`.
  public let displayPath: String
  /// The byte between fields given (a comma unless said otherwise; a comma too when the file's
  /// first lines choose it, ``CSVDialect/findsDelimiter``).
  public var delimiter: UInt8 { dialect.delimiter }
  /// How the file is written: its delimiter, its header, the lines before it.
  public let dialect: CSVDialect
  /// Null markers and declared types.
  public let options: ReadOptions
  private let loads = LoadTracker()
  /// Where loading stands.
  public var loadState: LoadState { loads.state }
  /// Moves with every load: the rows change only then.
  public var structureClock: StructureClock { loads.clock }
  /// What went wrong in the last load, when it failed.
  public private(set) var lastError: DataSourceError?
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { lastError?.description }
  /// What went wrong, typed.
  public var loadError: DataSourceError? { lastError }
  private(set) var table: ColumnTable?
  private let progress: LoadProgress?
  private let access: FileAccess?
  /// The file of a zip archive to read (`member "flights.csv"`).
  public let member: String?
  /// The most bytes a compressed file may inflate to (``CompressedFile/maximumInflatedBytes``
  /// unless given, and never more).
  public let inflatedLimit: Int?

  /// A provider of the rows of the CSV file at `path`: plain, gzip-compressed, or the one file
  /// (or `member`) of a zip archive, inflated as it is read.
  ///
  /// - Parameters:
  ///   - displayPath: the path as written, when `path` was resolved against a folder.
  ///   - delimiter: the byte between fields, `,` unless given; `nil` to find it from the file's
  ///     first lines (`;`, a tab or `|` where the header holds no comma and the rows agree).
  ///   - header: whether the first row names the columns (else `column0`, `column1`, …).
  ///   - skip: lines passed over before the header.
  ///   - member: the file of a zip archive to read.
  ///   - inflatedLimit: the most bytes a compressed file may inflate to.
  ///   - progress: counts bytes and rows while the file loads.
  ///   - access: which files may be read, checked on the file opened at every load.
  public init(
    path: String, displayPath: String? = nil, delimiter: UInt8? = UInt8(ascii: ","), header: Bool = true,
    skip: Int = 0, member: String? = nil, inflatedLimit: Int? = nil, options: ReadOptions = ReadOptions(),
    progress: LoadProgress? = nil, access: FileAccess? = nil
  ) {
    self.options = options
    self.path = path
    self.displayPath = displayPath ?? path
    self.dialect = CSVDialect(
      delimiter: delimiter ?? UInt8(ascii: ","), hasHeader: header, skippedLines: max(0, skip),
      findsDelimiter: delimiter == nil)
    self.member = member
    self.inflatedLimit = inflatedLimit
    self.progress = progress
    self.access = access
  }

  /// Reads and parses the whole file; on failure the provider is in `error`, with no items.
  public func load() async throws {
    try await loads.load(
      {
        let inflated = try CompressedFile.inflated(
          path, displayPath: displayPath, member: member, limit: inflatedLimit, progress: progress,
          access: access)
        // The inflated copy is read (twice for a column that turns out to be text) within the
        // load, and let go with it.
        return try withExtendedLifetime(inflated) {
          try CSVReader.read(
            fileAt: inflated?.path ?? path, displayPath: displayPath, dialect: dialect, options: options,
            progress: progress, access: inflated == nil ? access : nil)
        }
      },
      isEmpty: { $0.rowCount == 0 },
      apply: { table in
        self.table = table
        sample = nil
        profiles = table.profiles
        lastError = nil
      },
      fail: { error in
        table = nil
        sample = nil
        profiles = nil
        lastError = error
      })
  }

  /// Reads the header and the rows in the first `bytes` of the file only, so stages can be
  /// checked against the file's fields (and `explain` can say what it would read) before it is
  /// read whole.
  ///
  /// The provider stays unloaded, with no items: its fields are the header's, typed from the
  /// rows sampled (a whole read may make a column text). A compressed file or a zip member is
  /// not sampled: it would be inflated first.
  ///
  /// - Returns: whether the file was sampled.
  public func sampleFirstRows(bytes: Int = sampleBytes) throws -> Bool {
    // Read whole already: the rows are there.
    guard table == nil, Self.canSample(path, member: member) else { return false }
    let sample = try CSVReader.sample(
      fileAt: path, displayPath: displayPath, dialect: dialect, options: options, access: access,
      bytes: bytes)
    self.sample = sample
    profiles = sample.table.profiles.map(\.withoutNullCount)
    return true
  }

  /// The file's rows a chunk at a time, each chunk typed on its own, for a stream that holds
  /// one chunk rather than the file; `nil` when the file is `bytes` long or shorter (reading it
  /// whole costs little), compressed, or an archive's member.
  package func chunks(ifLongerThan bytes: Int) throws -> CSVChunks? {
    guard member == nil, CompressedFile.kind(ofFileAt: path) == nil,
      let size = FileBytes.size(atPath: path), size > bytes
    else { return nil }
    return try CSVReader.chunks(
      fileAt: path, displayPath: displayPath, dialect: dialect, options: options, progress: progress,
      access: access)
  }

  /// The delimiter a load finds in the plain file at `path` when none is given (a comma unless
  /// its header says otherwise, ``CSVDialect/findsDelimiter``); `nil` for a compressed file or
  /// one that cannot be opened, whose bytes say nothing before they are inflated.
  package static func foundDelimiter(ofFileAt path: String, skip: Int = 0) -> UInt8? {
    guard CompressedFile.kind(ofFileAt: path) == nil,
      let file = try? OpenFile(path, displayPath: path)
    else { return nil }
    return CSVDialect(skippedLines: skip, findsDelimiter: true).found(in: file).delimiter
  }

  /// Whether ``sampleFirstRows()`` reads the file at `path`: a plain file (not an archive's
  /// member), larger than a sample, so that reading its first rows saves reading it whole.
  public static func canSample(_ path: String, member: String?) -> Bool {
    guard member == nil, let size = FileBytes.size(atPath: path)
    else { return false }
    return size > sampleBytes && CompressedFile.kind(ofFileAt: path) == nil
  }

  /// Forgets every type the first rows showed but text, while the file is not read whole: a
  /// column they type as text is text in the whole file (a later row only widens a type, and
  /// text is the widest), any other may still become text.
  ///
  /// A column the first rows make text with blanks alone (`""`, `"  "`) is forgotten too: a
  /// number further down makes it numbers, the blanks null. A check that refuses a statement
  /// over these types refuses it whatever the rest of the file holds (a field of no known type
  /// is refused nothing).
  package func keepOnlyTextTypes() {
    guard table == nil, let sample else { return }
    profiles = profiles?.map { profile in
      guard profile.type != .text || sample.table.holdsOnlyBlanks(profile.name) else { return profile }
      var unknown = profile
      unknown.type = nil
      unknown.mixedTypes = []
      return unknown
    }
  }

  /// Whether the file at `path` is a plain file (not compressed, not an archive's member): one
  /// ``canSample(_:member:)`` reads to its first rows when it is large, and that costs little to
  /// read again when it is not.
  package static func isPlainFile(_ path: String, member: String?) -> Bool {
    member == nil && FileManager.default.fileExists(atPath: path)
      && CompressedFile.kind(ofFileAt: path) == nil
  }

  /// How much of a file ``sampleFirstRows(bytes:)`` reads unless told: as much as DuckDB's
  /// sniffer reads by default (20,480 rows) for rows of 50 bytes.
  public static let sampleBytes = 1 << 20

  /// The header and first rows read by ``sampleFirstRows()``, while the file is not read whole.
  private var sample: CSVSample?

  /// The first rows read while the file is not read whole, and an estimate of the file's rows;
  /// `nil` when the file is read, or the sample is all of it.
  package var firstRows: (table: ColumnTable, estimatedRows: Int)? {
    guard table == nil, let sample, !sample.isWhole else { return nil }
    return (sample.table, sample.estimatedRows)
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
  /// The fields every item is known to have, or `nil`.
  package var knownFields: [String]? { (table ?? sample?.table).map { Array($0.schema.names) } }

  /// What is known of the fields' types and nulls without reading the items.
  package var fieldProfiles: [FieldProfile]? { profiles }
  /// Worked out once per load.
  private var profiles: [FieldProfile]?

  /// How `describe` names this node.
  package var nodeTitle: String { "csv \(JSONWriter.quoted(displayPath))" }
  /// What `describe` shows beside the name: counts and state.
  package var nodeDetail: String? {
    guard table == nil, let sample else { return countsDetail }
    let rows = sample.table.rowCount
    // Megabytes of a million bytes, as the progress line counts them.
    let size =
      sample.fileBytes < 1_000_000
      ? "\(sample.fileBytes) bytes" : String(format: "%.1f MB", Double(sample.fileBytes) / 1_000_000)
    // An estimate to three figures: the sample's rows may be shorter or longer than the rest.
    return sample.isWhole
      ? "not read: \(size), \(ValueFormat.grouped(String(rows))) rows, typed from all of them"
      : "not read: \(size), about \(ValueFormat.roughly(sample.estimatedRows)) rows; typed from the first "
        + "\(ValueFormat.grouped(String(rows))), which a later row may change"
  }

}

/// Items of a JSON file: an array (of records or scalars), JSON Lines, or an array found at a
/// path inside the document (`at "data.items"`).
public final class JSONProvider: DataProvider, CompositionNode, RecordProviding, FieldProfiling {
  /// The file, as given.
  public let path: String
  /// The path as the user wrote it, for messages and `describe`.
  public let displayPath: String
  /// The path of keys to the array of items (`at "a.b"`), empty for the document itself.
  public let at: [String]
  /// Null markers and declared types.
  public let options: ReadOptions
  private let loads = LoadTracker()
  /// Where loading stands.
  public var loadState: LoadState { loads.state }
  /// Moves with every load: the rows change only then.
  public var structureClock: StructureClock { loads.clock }
  /// What went wrong in the last load, when it failed.
  public private(set) var lastError: DataSourceError?
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { lastError?.description }
  /// What went wrong, typed.
  public var loadError: DataSourceError? { lastError }
  /// The items: a table when every item is a record with the same fields (the common shape
  /// of a large file, held within a few times the file's size), else the values themselves.
  private var content = JSONContent.values([])
  /// The fields every item is known to have, or `nil`.
  public private(set) var knownFields: [String]?
  /// For a table, worked out at load; values are looked at by whoever asks.
  private var profiles: [FieldProfile]?
  /// What is known of the fields' types and nulls without reading the items.
  package var fieldProfiles: [FieldProfile]? { profiles }
  private let progress: LoadProgress?
  private let access: FileAccess?

  private enum JSONContent {
    case values([Value])
    case table(ColumnTable)

    var count: Int {
      switch self {
      case .values(let items): items.count
      case .table(let table): table.rowCount
      }
    }
  }

  /// Every item, in order.
  public var items: [Value] { (0..<content.count).map { item(at: ItemPath(item: $0, section: 0)) } }

  /// The table of columns the items are held in, when they are.
  var columnTable: ColumnTable? {
    if case .table(let table) = content { table } else { nil }
  }

  /// Whether the items are held as a table of columns.
  public var isColumnar: Bool { columnTable != nil }

  /// The file of a zip archive to read (`member "data.json"`).
  public let member: String?
  /// The most bytes a compressed file may inflate to (``CompressedFile/maximumInflatedBytes``
  /// unless given, and never more).
  public let inflatedLimit: Int?

  /// A provider of the items of the JSON (or JSON Lines) file at `path`: plain,
  /// gzip-compressed, or the one file (or `member`) of a zip archive.
  ///
  /// - Parameters:
  ///   - displayPath: the path as written, when `path` was resolved against a folder.
  ///   - at: the path inside the document to the list of items.
  ///   - member: the file of a zip archive to read.
  ///   - inflatedLimit: the most bytes a compressed file may inflate to.
  ///   - progress: counts bytes while the file loads.
  ///   - access: which files may be read, checked on the file opened at every load.
  public init(
    path: String, displayPath: String? = nil, at: [String] = [], member: String? = nil,
    inflatedLimit: Int? = nil, options: ReadOptions = ReadOptions(), progress: LoadProgress? = nil,
    access: FileAccess? = nil
  ) {
    self.member = member
    self.inflatedLimit = inflatedLimit
    self.options = options
    self.access = access
    self.path = path
    self.displayPath = displayPath ?? path
    self.at = at
    self.progress = progress
  }

  /// Reads and parses the file; on failure the provider is in `error`, with no items.
  public func load() async throws {
    try await loads.load(
      readContent, isEmpty: { $0.count == 0 },
      apply: { content in
        self.content = content
        switch content {
        case .values(let items):
          knownFields = Value.unionOfFields(items)
          profiles = nil
        case .table(let table):
          knownFields = Array(table.schema.names)
          profiles = table.profiles
        }
        lastError = nil
      },
      fail: { error in
        content = .values([])
        knownFields = nil
        profiles = nil
        lastError = error
      })
  }

  private func readContent() throws -> JSONContent {
    // The document is read whole into memory: an inflated file is needed only while it is read.
    let inflated = try CompressedFile.inflated(
      path, displayPath: displayPath, member: member, limit: inflatedLimit, progress: progress,
      access: access)
    let bytes = try FileBytes.read(
      inflated?.path ?? path, displayPath: displayPath, progress: progress,
      access: inflated == nil ? access : nil)
    try FileBytes.checkUTF8(bytes.buffer, path: displayPath)
    // Options change values, so the file is read as values when there are any.
    if options.isEmpty, let table = try JSONReader.columnTable(bytes, at: at) { return .table(table) }
    let items = try options.applied(to: try readItems(bytes), path: displayPath)
    return .values(JSONDates.typed(items, except: Set(options.types.keys)))
  }

  private func readItems(_ bytes: SharedBytes) throws -> [Value] {
    let path = displayPath
    let documents: [Value]
    do {
      documents = try JSONReader.parseAll(bytes.buffer)
    } catch let error as JSONReader.Failure {
      let (line, column) = error.location(in: bytes.buffer)
      throw DataSourceError.json(path: path, line: line, column: column, message: error.message)
    }
    let atText = at.isEmpty ? nil : at.joined(separator: ".")
    // An empty file is not an empty list: say so, as for an empty CSV.
    if documents.isEmpty {
      throw DataSourceError.json(path: path, line: 1, column: 1, message: "no JSON value (the file is empty)")
    }
    // One document: the array itself (or the array at the path). Several: JSON Lines.
    guard documents.count == 1 else {
      if let atText { return try documents.map { try self.list(in: $0, atText: atText) }.flatMap { $0 } }
      return documents
    }
    return try list(in: documents[0], atText: atText)
  }

  private func list(in document: Value, atText: String?) throws -> [Value] {
    guard let found = document.value(atPath: at) else {
      throw DataSourceError.jsonPathMissing(path: displayPath, at: atText ?? "")
    }
    switch found {
    case .list(let items): return items
    case .record where atText == nil: return [found]
    default: throw DataSourceError.jsonNotAList(path: displayPath, at: atText, found: found)
    }
  }

  /// The number of sections.
  public var numberOfSections: Int { 1 }
  /// The number of items in a section.
  public func numberOfItems(inSection section: Int) -> Int { content.count }
  /// The item at an index path.
  public func item(at itemPath: ItemPath) -> Value {
    switch content {
    case .values(let items): items[itemPath.item]
    case .table(let table): .record(table.record(at: itemPath.item))
    }
  }

  /// How `describe` names this node.
  package var nodeTitle: String {
    "json \(JSONWriter.quoted(displayPath))"
      + (at.isEmpty ? "" : " at \(JSONWriter.quoted(at.joined(separator: ".")))")
  }
  /// What `describe` shows beside the name: counts and state.
  package var nodeDetail: String? { countsDetail }
}

extension CSVProvider: ColumnReadable {
  package func fieldBatches(_ name: String) -> BatchReader? { table?.fieldBatches(name) }
}

extension JSONProvider: ColumnReadable {
  /// Only a file read as a table of columns has them; other JSON is read item by item.
  package func fieldBatches(_ name: String) -> BatchReader? { columnTable?.fieldBatches(name) }
}

extension CSVProvider: ReadsAFile {}
extension JSONProvider: ReadsAFile {}
