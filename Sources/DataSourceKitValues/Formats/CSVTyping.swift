import DataSourceKit
import Foundation

/// Typing the columns of a CSV file, a chunk of rows at a time: each field is read once, parsed
/// into the column's type as it is found.
extension CSVReader {
  /// One column's fields in a chunk of the file.
  struct ChunkColumn {
    let starts: UnsafePointer<UInt32>
    let lengths: UnsafePointer<UInt32>
    let rows: Int
    /// The chunk's bytes, which the starts are offsets into.
    let bytes: UnsafeBufferPointer<UInt8>
    let place: FilePlace
    /// The column's row of the chunk's first row.
    let firstRow: Int
  }

  /// A column being read, a chunk at a time: typed as its values so far say (or as `types {…}`
  /// declares), or text.
  ///
  /// A column that turns out to be text after its first chunk (a text among numbers further
  /// down, or markers) is not rebuilt from the rows already typed: it says it needs its texts,
  /// and the load reads them again from the file.
  ///
  /// `@unchecked Sendable`: the columns of a chunk are read side by side, each builder by one
  /// task at a time.
  final class ColumnBuilder: @unchecked Sendable {
    enum Outcome {
      case column(any Column, markers: [Marker])
      /// Text whose fields the caller makes a column of where they lie (``init(name:options:asText:referencingText:)``).
      case referencedText
      /// The column is text and must be read again as text; the markers that made it so.
      case needsText(markers: [Marker])
    }

    let name: String
    private let declared: DeclaredType?
    private let nullMarkers: [String]
    private(set) var rowCount = 0
    /// How many rows the column will have, as far as the reader can tell: what to reserve.
    var expectedRows = 0 {
      didSet {
        text?.expectedRows = expectedRows
        typed.reserve(expectedRows)
      }
    }

    private var typed = TypedColumnBuilder()
    private var text: TextColumnBuilder?
    private var declaredValues: [Value] = []
    /// Turned to text after its first chunk: the later chunks are not looked at.
    private var awaitsText = false
    /// Texts in an otherwise typed column, with their counts, while there are few of them.
    private var texts: [String: Int] = [:]
    private var textOrder: [String] = []
    /// Whether a field read as null for typing would not be null as text (blank, or `""`).
    private var hasTextualNull = false

    /// A builder of the column `name`.
    ///
    /// - Parameter asText: read the column as text, whatever its values.
    init(name: String, options: ReadOptions, asText: Bool = false, referencingText: Bool = false) {
      self.name = name
      declared = asText ? nil : options.types[name]
      nullMarkers = options.nullMarkers
      referencesText = referencingText && options.nullMarkers.isEmpty && declared == nil && !asText
      if asText || declared?.type == .text { text = TextColumnBuilder(expectedRows: 0) }
    }

    deinit { text?.release() }

    /// Reads a chunk's fields of the column; a value that does not fit a declared type is an
    /// error naming its line.
    func add(_ chunk: ChunkColumn) throws {
      defer { rowCount = chunk.firstRow + chunk.rows }
      let reader = FieldReader(chunk, markers: nullMarkers)
      if awaitsText || isReferencedText { return }
      if var text {
        // Mutated as a local, not through the class (see TextColumnBuilder).
        self.text = nil
        Self.addText(reader, to: &text)
        self.text = text
        return
      }
      if let declared {
        return try addDeclared(declared, reader)
      }
      // Mutated as a local, not through the class, and put back at the end.
      var typed = self.typed
      self.typed = TypedColumnBuilder()
      defer { if !isText { self.typed = typed } }
      typed.extend(to: chunk.firstRow + chunk.rows)
      for r in 0..<chunk.rows {
        let row = chunk.firstRow + r
        guard let field = reader.field(r) else {
          if reader.rawLength(r) != 0, !reader.isMarker(r) { hasTextualNull = true }
          typed.setNull(row)
          continue
        }
        if typed.storeIfItFits(field, at: row) { continue }
        switch kind(of: field) {
        case .exactText:
          if !isLeadingZeroInteger(field) {
            textReason =
              "it holds \(describe(field, r, reader)), beyond what an int or a double holds exactly; it is kept as written"
          }
          return becomeText(reader)
        case .text:
          let text = reader.text(r)
          if texts[text] == nil { textOrder.append(text) }
          texts[text, default: 0] += 1
          // Many distinct texts: a text column, not a typed one with markers.
          if texts.count > maximumMarkers { return becomeText(reader) }
        case let kind:
          // Values of two types that do not share one (a bool among numbers): text.
          guard typed.widen(toHold: kind, at: row) else {
            textReason = reason(kind, after: typed.type, field, r, reader)
            return becomeText(reader)
          }
          typed.store(field, of: kind, at: row)
        }
      }
    }

    /// Why a column of numbers or dates so far is text, when no marker says it: two kinds of
    /// values no one type holds exactly.
    private(set) var textReason: String?

    /// Why a field of `kind` cannot join the column's values.
    private func reason(
      _ kind: FieldKind, after type: ValueType?, _ field: UnsafeBufferPointer<UInt8>, _ r: Int,
      _ reader: FieldReader
    ) -> String {
      let example = describe(field, r, reader)
      let isNumber = kind == .int || kind == .wideInt || kind == .double
      if isNumber, type == .int || type == .double {
        return "it holds integers beyond 2^53 beside fractions (\(example)), which a double would round; "
          + "types {\(name): double} reads it as numbers, rounded"
      }
      if type == .date, kind == .date || kind == .slashDate {
        return "it holds dates written with - and with / (\(example)), which no one format reads"
      }
      let had = type.map { "\($0.rawValue)s" } ?? "values"
      let kindName =
        switch kind {
        case .int, .wideInt: "an int"
        case .double: "a double"
        case .bool: "a bool"
        case .date, .slashDate: "a date"
        case .timestamp: "a timestamp"
        case .exactText, .text: "a text"
        }
      return "it holds \(had) and \(kindName) (\(example)), which no one type holds"
    }

    /// `12345678901234567 at line 3`.
    private func describe(_ field: UnsafeBufferPointer<UInt8>, _ r: Int, _ reader: FieldReader) -> String {
      let chunk = reader.chunk
      return
        "\(String(decoding: field, as: UTF8.self)) at line \(chunk.place.line(of: reader.start(r), in: chunk.bytes))"
    }

    /// `007`, `-01`: an integer written with leading zeros (a code or an ID, kept as written
    /// without a word).
    private func isLeadingZeroInteger(_ field: UnsafeBufferPointer<UInt8>) -> Bool {
      var i = 0
      if i < field.count, field[i] == UInt8(ascii: "-") || field[i] == UInt8(ascii: "+") { i += 1 }
      return field.count - i > 1 && field[i] == UInt8(ascii: "0")
    }

    /// Whether the column was found to be text.
    private var isText: Bool { awaitsText || text != nil || isReferencedText }

    /// Whether a column found to be text is left where its fields lie, for the caller to make a
    /// column of (a chunk of a stream, whose bytes outlive the columns made of them): no copy.
    private let referencesText: Bool
    /// Whether the column was found to be text, and is left where its fields lie.
    private var isReferencedText = false

    /// The column is text: read from this chunk when it holds every row so far, else later.
    private func becomeText(_ reader: FieldReader) {
      typed = TypedColumnBuilder()
      texts = [:]
      if referencesText {
        isReferencedText = true
        return
      }
      guard reader.chunk.firstRow == 0 else {
        awaitsText = true
        return
      }
      var text = TextColumnBuilder(expectedRows: expectedRows)
      Self.addText(reader, to: &text)
      self.text = text
    }

    static func addText(_ reader: FieldReader, to text: inout TextColumnBuilder) {
      let chunk = reader.chunk
      for r in 0..<chunk.rows {
        let start = Int(chunk.starts[r])
        let rawLength = chunk.lengths[r]
        let field = UnsafeBufferPointer(
          rebasing: chunk.bytes[start..<start + Int(rawLength & FieldRefs.lengthMask)])
        text.append(field, rawLength: rawLength, isNull: reader.isMarker(r))
      }
    }

    private func addDeclared(_ declared: DeclaredType, _ reader: FieldReader) throws {
      let chunk = reader.chunk
      declaredValues.reserveCapacity(expectedRows)
      for r in 0..<chunk.rows {
        guard let field = reader.field(r) else {
          declaredValues.append(.null)
          continue
        }
        let text = String(decoding: field, as: UTF8.self)
        guard let value = declared.read(text) else {
          throw DataSourceError.valueNotOfType(
            path: chunk.place.path, place: "\(chunk.place.line(of: reader.start(r), in: chunk.bytes))",
            field: name, value: text, type: declared.description)
        }
        declaredValues.append(value)
      }
    }

    /// The column of a builder made `asText`.
    func finishedText() -> any Column {
      var text = self.text ?? TextColumnBuilder(expectedRows: 0)
      self.text = nil
      return text.finished()
    }

    /// The column, or that it must be read again as text.
    func finished() -> Outcome {
      if var text {
        self.text = nil
        return .column(text.finished(), markers: [])
      }
      if let declared { return .column(ValueColumn(declaredValues, type: declared.type), markers: []) }
      if awaitsText { return .needsText(markers: []) }
      if isReferencedText { return .referencedText }
      guard let type = typed.type else {
        // Nothing typed: text. Only missing fields: a column of nulls, with nothing to read again.
        guard texts.isEmpty, !hasTextualNull else {
          return referencesText ? .referencedText : .needsText(markers: [])
        }
        var text = TextColumnBuilder(expectedRows: rowCount)
        for _ in 0..<rowCount { text.appendNull() }
        return .column(text.finished(), markers: [])
      }
      if !texts.isEmpty {
        // Numbers (or dates) everywhere but a few texts: say which, so the user can read them
        // as null.
        let markerCount = texts.values.reduce(0, +)
        let markers =
          markerCount <= typed.typedCount
          ? textOrder.map { Marker(text: $0, count: texts[$0] ?? 0, wouldBe: type) } : []
        return markers.isEmpty && referencesText ? .referencedText : .needsText(markers: markers)
      }
      return .column(typed.finished(), markers: [])
    }
  }

  /// What a field's text is, for inferring its column's type.
  enum FieldKind {
    case int, wideInt, double, bool, date, timestamp
    /// A date written `YYYY/MM/DD`, which DuckDB reads as a date too; a column holds dates
    /// written one way.
    case slashDate
    /// An integer written with leading zeros (`02134`) or beyond 64 bits: it must stay text.
    case exactText
    case text
  }

  static func kind(of field: UnsafeBufferPointer<UInt8>) -> FieldKind {
    if let integer = parseInt(field) { return integer.magnitude > 1 << 53 ? .wideInt : .int }
    if isIntegerSpelling(field) { return .exactText }
    // 1E400 would be infinity: the text is kept, as for integers beyond 64 bits; `NaN` and
    // `Infinity` spelled are doubles, as DuckDB reads them.
    if let double = parseDouble(field) {
      return double.isFinite || parseNonFinite(field) != nil ? .double : .exactText
    }
    if parseBool(field) != nil { return .bool }
    if field.count == 10, CalendarDate.parseISODate(field) != nil { return .date }
    if field.count == 10, CalendarDate.parseISODate(field, separator: UInt8(ascii: "/")) != nil {
      return .slashDate
    }
    if field.count >= 16, CalendarDate.parseISOTimestamp(field) != nil { return .timestamp }
    return .text
  }

  /// The fields of one column, as typing reads them.
  ///
  /// A field is read without the spaces and tabs around it (` .5` is a number, as DuckDB reads
  /// it), and is null when empty, blank, quoted empty outside a text column, or one of the null
  /// markers. A column that stays text keeps its fields as written.
  struct FieldReader {
    let chunk: ChunkColumn
    private let starts: UnsafePointer<UInt32>
    private let lengths: UnsafePointer<UInt32>
    let bytes: UnsafeBufferPointer<UInt8>
    let markers: [[UInt8]]
    /// The lengths of the markers, a bit each (63 for any length from 63 up): most fields are
    /// of none of them and need no comparison.
    let markerLengths: UInt64

    init(_ chunk: ChunkColumn, markers: [String]) {
      self.chunk = chunk
      starts = chunk.starts
      lengths = chunk.lengths
      bytes = chunk.bytes
      self.markers = markers.map { Array($0.utf8) }
      markerLengths = self.markers.reduce(0) { $0 | ($1.count < 64 ? 1 << UInt64($1.count) : 1 << 63) }
    }

    /// Where a field starts in the chunk.
    @inline(__always) func start(_ row: Int) -> Int { Int(starts[row]) }
    /// A field's length and its escaped flag.
    @inline(__always) func rawLength(_ row: Int) -> UInt32 { lengths[row] }

    @inline(__always) func field(_ row: Int) -> UnsafeBufferPointer<UInt8>? {
      guard let field = trimmed(row) else { return nil }
      if !markers.isEmpty, isMarker(field) { return nil }
      return field
    }

    /// Whether a field is one of the null markers (spaces around it aside).
    func isMarker(_ row: Int) -> Bool {
      guard !markers.isEmpty, let field = trimmed(row) else { return false }
      return isMarker(field)
    }

    private func isMarker(_ field: UnsafeBufferPointer<UInt8>) -> Bool {
      guard markerLengths & (1 << UInt64(min(field.count, 63))) != 0 else { return false }
      // A marker the field's length (a two-digit number beside "NA"): compared with memcmp.
      return markers.contains { marker in
        marker.count == field.count
          && marker.withUnsafeBufferPointer { bytes in
            guard let a = bytes.baseAddress, let b = field.baseAddress else { return true }
            return memcmp(a, b, field.count) == 0
          }
      }
    }

    @inline(__always) private func trimmed(_ row: Int) -> UnsafeBufferPointer<UInt8>? {
      let length = Int(rawLength(row) & FieldRefs.lengthMask)
      if length == 0 { return nil }
      var start = start(row)
      var end = start + length
      while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") {
        start += 1
      }
      while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") {
        end -= 1
      }
      if start == end { return nil }
      return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// The text of a field, quotes undone.
    func text(_ row: Int) -> String {
      let length = Int(rawLength(row) & FieldRefs.lengthMask)
      let start = start(row)
      let field = UnsafeBufferPointer(rebasing: bytes[start..<start + length])
      return rawLength(row) & FieldRefs.escapedFlag != 0
        ? unescape(field) : String(decoding: field, as: UTF8.self)
    }
  }

  /// The most distinct texts a typed column may hold for them to be called markers.
  package static let maximumMarkers = 3

  /// A column's values parsed into the type its fields have so far, widened as fields need:
  /// int to double, date to timestamp.
  struct TypedColumnBuilder {
    /// How many rows there are room for: the rows of the chunks so far.
    private(set) var rowCount = 0
    /// How many rows to reserve room for.
    private var expectedRows = 0
    /// The column's type so far; `nil` before the first typed field.
    private(set) var type: ValueType?
    /// Whether an integer beyond 2^53 was seen: it could not be a double without losing digits.
    private var hasWideInt = false
    /// How many fields were typed.
    private(set) var typedCount = 0
    /// Ints, dates (days) and timestamps (microseconds).
    private var ints: [Int] = []
    private var doubles: [Double] = []
    /// 0 false, 1 true, 2 null.
    private var bools: [UInt8] = []
    /// The dates parsed lately: a column's dates repeat (a few thousand days in a million rows).
    private var dates = DateCache()
    /// The byte between a date's parts in this column: `-`, or `/` for `YYYY/MM/DD`.
    private var dateSeparator = UInt8(ascii: "-")
    private var nulls: NullMask?

    /// Makes room for rows up to `count` (a new chunk's).
    mutating func extend(to count: Int) {
      let added = count - rowCount
      guard added > 0 else { return }
      switch type {
      case .double?: doubles.append(contentsOf: repeatElement(0, count: added))
      case .bool?: bools.append(contentsOf: repeatElement(2, count: added))
      case nil: break
      default: ints.append(contentsOf: repeatElement(0, count: added))
      }
      nulls?.extend(to: count)
      rowCount = count
    }

    /// Reserves room for `count` rows in all.
    mutating func reserve(_ count: Int) {
      expectedRows = count
      switch type {
      case .double?: doubles.reserveCapacity(count)
      case .bool?: bools.reserveCapacity(count)
      case nil: break
      default: ints.reserveCapacity(count)
      }
    }

    mutating func setNull(_ row: Int) {
      if nulls == nil { nulls = NullMask(count: rowCount) }
      nulls?.setNull(row)
    }

    /// Parses the field as the column's type so far and stores it; false when it is not one.
    @inline(__always) mutating func storeIfItFits(_ field: UnsafeBufferPointer<UInt8>, at row: Int) -> Bool {
      switch type {
      case .int?:
        guard let value = parseInt(field) else { return false }
        if value.magnitude > 1 << 53 { hasWideInt = true }
        ints[row] = value
      case .double?:
        // An integer spelling is an int (or text, with leading zeros): the slow path decides.
        guard !isIntegerSpelling(field), let value = parseDouble(field),
          value.isFinite || parseNonFinite(field) != nil
        else { return false }
        doubles[row] = value
      case .date?:
        guard field.count == 10, let days = dates.days(of: field, separator: dateSeparator) else {
          return false
        }
        ints[row] = days
      case .timestamp?:
        guard field.count >= 16, let micros = CalendarDate.parseISOTimestamp(field) else { return false }
        ints[row] = micros
      case .bool?:
        guard let value = parseBool(field) else { return false }
        bools[row] = value ? 1 : 0
      default:
        return false
      }
      typedCount += 1
      return true
    }

    /// Makes the column able to hold a field of `kind`, converting the values so far; false
    /// when no type holds both.
    mutating func widen(toHold kind: FieldKind, at row: Int) -> Bool {
      let wide = hasWideInt || kind == .wideInt
      let needed: ValueType?
      switch (type, kind) {
      case (nil, .int), (nil, .wideInt), (.int?, .int), (.int?, .wideInt): needed = .int
      case (nil, .double), (.int?, .double), (.double?, .int), (.double?, .double):
        needed = wide ? nil : .double
      case (nil, .bool), (.bool?, .bool): needed = .bool
      case (nil, .date), (nil, .slashDate): needed = .date
      // Dates written one way: `-` beside `/` is text, as DuckDB reads it; a timestamp is
      // written with `-`.
      case (.date?, .date) where dateSeparator == UInt8(ascii: "-"): needed = .date
      case (.date?, .slashDate) where dateSeparator == UInt8(ascii: "/"): needed = .date
      case (.date?, .timestamp) where dateSeparator == UInt8(ascii: "-"): needed = .timestamp
      case (nil, .timestamp), (.timestamp?, .date), (.timestamp?, .timestamp): needed = .timestamp
      default: needed = nil
      }
      guard let needed else { return false }
      if kind == .wideInt { hasWideInt = true }
      if type == nil, kind == .slashDate { dateSeparator = UInt8(ascii: "/") }
      if needed == type { return true }
      switch (type, needed) {
      case (nil, .double):
        doubles.reserveCapacity(max(expectedRows, rowCount))
        doubles.append(contentsOf: repeatElement(0, count: rowCount))
      case (nil, .bool):
        bools.reserveCapacity(max(expectedRows, rowCount))
        bools.append(contentsOf: repeatElement(2, count: rowCount))
      case (nil, _):
        ints.reserveCapacity(max(expectedRows, rowCount))
        ints.append(contentsOf: repeatElement(0, count: rowCount))
      case (.int?, .double):
        doubles.reserveCapacity(max(expectedRows, rowCount))
        doubles.append(contentsOf: ints.lazy.map(Double.init))
        ints = []
      case (.date?, .timestamp):
        for r in 0..<row { ints[r] *= CalendarDate.microsecondsPerDay }
      default: break
      }
      type = needed
      return true
    }

    /// Stores a field of `kind`, which the column's type holds.
    mutating func store(_ field: UnsafeBufferPointer<UInt8>, of kind: FieldKind, at row: Int) {
      switch (type, kind) {
      case (.double?, _): doubles[row] = parseDouble(field) ?? 0
      case (.bool?, _): bools[row] = parseBool(field) == true ? 1 : 0
      case (.timestamp?, .date):
        ints[row] = (CalendarDate.parseISODate(field) ?? 0) * CalendarDate.microsecondsPerDay
      case (.timestamp?, _): ints[row] = CalendarDate.parseISOTimestamp(field) ?? 0
      case (.date?, _): ints[row] = CalendarDate.parseISODate(field, separator: dateSeparator) ?? 0
      default: ints[row] = parseInt(field) ?? 0
      }
      typedCount += 1
    }

    /// The column, of the type found.
    func finished() -> any Column {
      switch type {
      case .double?: DoubleColumn(doubles, nulls: nulls)
      // Booleans keep null in the value itself (2), so they need no mask.
      case .bool?:
        BoolColumn(bools)
      case .date?: DateColumn(ints, nulls: nulls, type: .date)
      case .timestamp?: DateColumn(ints, nulls: nulls, type: .timestamp)
      default: IntColumn(ints, nulls: nulls)
      }
    }
  }
}

/// The day numbers of recently read `YYYY-MM-DD` fields, by their bytes: a date column repeats
/// its days, and comparing ten bytes costs less than checking and converting them.
///
/// A field is looked up by its bytes, so a date is cached only once it was parsed (and found
/// valid) in full. The slots (56 KB) are made when the column first meets a ten-byte field:
/// every column has a cache, and a file of 100,000 columns of numbers must not pay 5.6 GB for
/// them.
struct DateCache {
  private static let size = 4_096
  /// Each slot's first eight bytes and last two, and its day number; empty until first needed.
  ///
  /// A slot never filled has a first word no date has (0).
  private var heads: [UInt64] = []
  private var tails: [UInt16] = []
  private var days: [Int32] = []

  /// The day number of a ten-byte field, or `nil` when it is no valid date written with
  /// `separator` between its parts.
  @inline(__always)
  mutating func days(of field: UnsafeBufferPointer<UInt8>, separator: UInt8) -> Int? {
    guard field.count == 10, let base = field.baseAddress else { return nil }
    if heads.isEmpty {
      heads = [UInt64](repeating: 0, count: DateCache.size)
      tails = [UInt16](repeating: 0, count: DateCache.size)
      days = [Int32](repeating: 0, count: DateCache.size)
    }
    let raw = UnsafeRawPointer(base)
    let head = raw.loadUnaligned(as: UInt64.self)
    let tail = raw.loadUnaligned(fromByteOffset: 8, as: UInt16.self)
    let mixed = (head ^ (UInt64(tail) &* 0x9E37_79B9)) &* 0xFF51_AFD7_ED55_8CCD
    let slot = Int(truncatingIfNeeded: mixed >> 52)
    if heads[slot] == head, tails[slot] == tail { return Int(days[slot]) }
    guard let parsed = CalendarDate.parseISODate(field, separator: separator) else { return nil }
    heads[slot] = head
    tails[slot] = tail
    days[slot] = Int32(truncatingIfNeeded: parsed)
    return parsed
  }
}
