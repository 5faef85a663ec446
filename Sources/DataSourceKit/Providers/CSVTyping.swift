import Foundation

/// Typing the columns of a CSV file: each column's fields are read once, parsed into the
/// column's type as it is found, and the columns are typed side by side on the machine's cores.
extension CSVReader {
  /// Types every column, on as many cores as there are.
  ///
  /// A column that fails (a value that does not fit its declared type) is reported; when
  /// several fail, the leftmost, as a reader going column by column would.
  ///
  /// - Parameter fields: each column's fields; a column's are let go once it is typed, unless
  ///   it is text and keeps them.
  static func typeColumns(
    _ fields: consuming [FieldRefs], names: [String], rowCount: Int, storage: SharedBytes,
    options: ReadOptions,
    path: String
  ) throws -> (columns: [any Column], markers: [String: [Marker]]) {
    let pending = SlotArray<FieldRefs>(count: fields.count)
    for (c, refs) in fields.enumerated() { pending[c] = refs }
    _ = consume fields
    let results = SlotArray<Result<(any Column, [Marker]), any Error>>(count: names.count)
    DispatchQueue.concurrentPerform(iterations: names.count) { c in
      guard let refs = pending[c] else { return }
      pending[c] = nil
      let reader = FieldReader(refs: refs, bytes: storage.buffer, markers: options.nullMarkers)
      results[c] = Result {
        try inferColumn(
          reader, rowCount: rowCount, storage: storage, name: names[c], options: options, path: path)
      }
    }
    var columns: [any Column] = []
    var markers: [String: [Marker]] = [:]
    for c in names.indices {
      guard let result = results[c] else { continue }
      let (column, found) = try result.get()
      columns.append(column)
      if !found.isEmpty { markers[names[c]] = found }
    }
    return (columns, markers)
  }

  /// What a field's text is, for inferring its column's type.
  fileprivate enum FieldKind {
    case int, wideInt, double, bool, date, timestamp
    /// An integer written with leading zeros (`02134`) or beyond 64 bits: it must stay text.
    case exactText
    case text
  }

  fileprivate static func kind(of field: UnsafeBufferPointer<UInt8>) -> FieldKind {
    if let integer = parseInt(field) { return integer.magnitude > 1 << 53 ? .wideInt : .int }
    if isIntegerSpelling(field) { return .exactText }
    // 1E400 would be infinity: the text is kept, as for integers beyond 64 bits.
    if let double = parseDouble(field) { return double.isFinite ? .double : .exactText }
    if parseBool(field) != nil { return .bool }
    if field.count == 10, CalendarDate.parseISODate(field) != nil { return .date }
    if field.count >= 16, CalendarDate.parseISOTimestamp(field) != nil { return .timestamp }
    return .text
  }

  /// The fields of one column, as typing reads them.
  ///
  /// A field is read without the spaces and tabs around it (` .5` is a number, as DuckDB reads
  /// it), and is null when empty, blank, quoted empty outside a text column, or one of the null
  /// markers. A column that stays text keeps its fields as written.
  fileprivate struct FieldReader {
    let refs: FieldRefs
    private let starts: UnsafePointer<UInt32>
    private let lengths: UnsafePointer<UInt32>
    let bytes: UnsafeBufferPointer<UInt8>
    let markers: [[UInt8]]
    /// The lengths of the markers, a bit each (63 for any length from 63 up): most fields are
    /// of none of them and need no comparison.
    let markerLengths: UInt64

    init(refs: FieldRefs, bytes: UnsafeBufferPointer<UInt8>, markers: [String]) {
      self.refs = refs
      starts = UnsafePointer(refs.starts)
      lengths = UnsafePointer(refs.lengths)
      self.bytes = bytes
      self.markers = markers.map { Array($0.utf8) }
      markerLengths = self.markers.reduce(0) { $0 | ($1.count < 64 ? 1 << UInt64($1.count) : 1 << 63) }
    }

    /// Where a field starts in the file.
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
  static let maximumMarkers = 3

  /// Types a column: from its declared type when `types {…}` gives one (a value that does not
  /// fit is an error), else from all of its values.
  ///
  /// - Complexity: O(rows), each field parsed once: into the type the column has so far, and
  ///   only when it does not fit, looked at again to find what it is.
  private static func inferColumn(
    _ reader: FieldReader, rowCount: Int, storage: SharedBytes, name: String, options: ReadOptions,
    path: String
  ) throws -> (any Column, markers: [Marker]) {
    // Declared text is read as a text column is: in place, fields as written, `""` empty text.
    if let declared = options.types[name], declared.type == .text {
      return (textColumn(reader, rowCount: rowCount, storage: storage), [])
    }
    if let declared = options.types[name] {
      return (try declaredColumn(declared, reader, rowCount: rowCount, name: name, path: path), [])
    }
    func asText() -> any Column { textColumn(reader, rowCount: rowCount, storage: storage) }
    var column = TypedColumnBuilder(rowCount: rowCount)
    // Texts in an otherwise typed column, with their counts, while there are few of them.
    var texts: [String: Int] = [:]
    var textOrder: [String] = []
    for row in 0..<rowCount {
      guard let field = reader.field(row) else {
        column.setNull(row)
        continue
      }
      if column.storeIfItFits(field, at: row) { continue }
      switch kind(of: field) {
      case .exactText:
        return (asText(), [])
      case .text:
        let text = reader.text(row)
        if texts[text] == nil { textOrder.append(text) }
        texts[text, default: 0] += 1
        // Many distinct texts: a text column, not a typed one with markers.
        if texts.count > maximumMarkers { return (asText(), []) }
      case let kind:
        // Values of two types that do not share one (a bool among numbers): text.
        guard column.widen(toHold: kind, at: row) else { return (asText(), []) }
        column.store(field, of: kind, at: row)
      }
    }
    guard let type = column.type else { return (asText(), []) }
    if !texts.isEmpty {
      // Numbers (or dates) everywhere but a few texts: say which, so the user can read them
      // as null.
      let markerCount = texts.values.reduce(0, +)
      let markers =
        markerCount <= column.typedCount
        ? textOrder.map { Marker(text: $0, count: texts[$0] ?? 0, wouldBe: type) } : []
      return (asText(), markers)
    }
    return (column.finished(), [])
  }

  /// A column's values parsed into the type its fields have so far, widened as fields need:
  /// int to double, date to timestamp.
  fileprivate struct TypedColumnBuilder {
    let rowCount: Int
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
    private var nulls: NullMask?

    init(rowCount: Int) { self.rowCount = rowCount }

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
        guard !isIntegerSpelling(field), let value = parseDouble(field), value.isFinite else { return false }
        doubles[row] = value
      case .date?:
        guard field.count == 10, let days = CalendarDate.parseISODate(field) else { return false }
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
      case (nil, .date), (.date?, .date): needed = .date
      case (nil, .timestamp), (.date?, .timestamp), (.timestamp?, .date), (.timestamp?, .timestamp):
        needed = .timestamp
      default: needed = nil
      }
      guard let needed else { return false }
      if kind == .wideInt { hasWideInt = true }
      if needed == type { return true }
      switch (type, needed) {
      case (nil, .double): doubles = [Double](repeating: 0, count: rowCount)
      case (nil, .bool): bools = [UInt8](repeating: 2, count: rowCount)
      case (nil, _): ints = [Int](repeating: 0, count: rowCount)
      case (.int?, .double):
        doubles = ints.map(Double.init)
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
      case (.date?, _): ints[row] = CalendarDate.parseISODate(field) ?? 0
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

  private static func textColumn(_ reader: FieldReader, rowCount: Int, storage: SharedBytes) -> any Column {
    let refs = reader.refs
    guard !reader.markers.isEmpty else { return TextColumn(refs, storage: storage, nulls: nil) }
    var nulls: NullMask?
    for row in 0..<rowCount where reader.isMarker(row) {
      if nulls == nil { nulls = NullMask(count: rowCount) }
      nulls?.setNull(row)
    }
    return TextColumn(refs, storage: storage, nulls: nulls)
  }

  /// A column of a declared type; a value that does not fit is an error naming its line.
  private static func declaredColumn(
    _ declared: DeclaredType, _ reader: FieldReader, rowCount: Int, name: String, path: String
  ) throws -> any Column {
    var values = [Value](repeating: .null, count: rowCount)
    for row in 0..<rowCount {
      guard let field = reader.field(row) else { continue }
      let text = String(decoding: field, as: UTF8.self)
      guard let value = declared.read(text) else {
        let start = reader.start(row)
        throw DataSourceError.valueNotOfType(
          path: path, place: "\(FileBytes.line(of: start, in: reader.bytes))", field: name, value: text,
          type: declared.description)
      }
      values[row] = value
    }
    return ValueColumn(values, type: declared.type)
  }
}
