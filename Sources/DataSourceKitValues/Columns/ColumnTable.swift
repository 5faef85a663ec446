import DataSourceKit
import Foundation

/// Which rows of a column are null, one bit a row.
struct NullMask: Sendable {
  fileprivate var words: [UInt64]

  init(count: Int) { words = [UInt64](repeating: 0, count: (count + 63) / 64) }

  mutating func setNull(_ row: Int) { words[row >> 6] |= 1 << UInt64(row & 63) }
  /// Makes room for rows up to `count`, none of them null.
  mutating func extend(to count: Int) {
    let needed = (count + 63) / 64
    if words.count < needed { words.append(contentsOf: repeatElement(0, count: needed - words.count)) }
  }
  func isNull(_ row: Int) -> Bool { words[row >> 6] & (1 << UInt64(row & 63)) != 0 }
}

/// Bytes that text columns point into: a file read whole (JSON), or a column's own texts (CSV).
///
/// Held as one raw buffer rather than an array so reading a field retains nothing.
///
/// `@unchecked Sendable`: the buffer is written once before this object exists and never
/// mutated after, so concurrent reads are safe; the compiler cannot see that through a raw
/// pointer.
package final class SharedBytes: @unchecked Sendable {
  package let buffer: UnsafeBufferPointer<UInt8>
  /// Whether the buffer came from `malloc` (a ``ByteArena``) rather than Swift's allocator.
  private let isMallocated: Bool

  init(owning pointer: UnsafeMutableRawPointer, count: Int) {
    buffer = UnsafeBufferPointer(start: pointer.bindMemory(to: UInt8.self, capacity: count), count: count)
    isMallocated = false
  }

  /// A copy of `bytes`.
  convenience init(copying bytes: UnsafeBufferPointer<UInt8>) {
    let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: max(bytes.count, 1))
    if let base = bytes.baseAddress { pointer.update(from: base, count: bytes.count) }
    self.init(owning: UnsafeMutableRawPointer(pointer), count: bytes.count)
  }

  /// Takes over bytes allocated with `malloc`.
  init(mallocated pointer: UnsafeMutablePointer<UInt8>?, count: Int) {
    buffer = UnsafeBufferPointer(start: pointer, count: count)
    isMallocated = true
  }

  deinit {
    if isMallocated {
      free(UnsafeMutableRawPointer(mutating: buffer.baseAddress))
    } else {
      buffer.deallocate()
    }
  }
}

/// Where each text of a column sits in its bytes: start and length, and a flag on the length
/// (see ``escapedFlag``).
///
/// A class over two raw buffers rather than two arrays: readers append a field at a time, and
/// an array's append checks its uniqueness and capacity each time (a fifth of a load was spent
/// there). The buffers come from `malloc` and grow with `realloc`, which moves a large block's
/// pages rather than copying them, so growing never holds the old and new buffers at once.
///
/// `@unchecked Sendable`: appended to by one reader, and only read after it is handed to a
/// column.
final class FieldRefs: @unchecked Sendable {
  /// Set when the field was quoted and holds doubled quotes, or was quoted and empty (`""`, empty
  /// text rather than a missing value).
  static let escapedFlag: UInt32 = 1 << 31
  /// Written out rather than `~escapedFlag`: a constant, not a global that hot loops check is
  /// initialized on every field.
  static let lengthMask: UInt32 = 0x7FFF_FFFF
  private(set) var starts: UnsafeMutablePointer<UInt32>
  private(set) var lengths: UnsafeMutablePointer<UInt32>
  private(set) var count = 0
  private var capacity: Int

  init(capacity: Int = 16) {
    self.capacity = max(capacity, 16)
    starts = Self.allocate(self.capacity)
    lengths = Self.allocate(self.capacity)
  }

  deinit {
    free(starts)
    free(lengths)
  }

  /// A copy of `count` starts and raw lengths (a chunk's fields of one column).
  convenience init(starts: UnsafePointer<UInt32>, lengths: UnsafePointer<UInt32>, count: Int) {
    self.init(capacity: count)
    self.starts.update(from: starts, count: count)
    self.lengths.update(from: lengths, count: count)
    self.count = count
  }

  @inline(__always) func append(start: Int, length: Int, escaped: Bool) {
    if count == capacity { reserve(capacity * 2) }
    starts[count] = UInt32(truncatingIfNeeded: start)
    lengths[count] = UInt32(truncatingIfNeeded: length) | (escaped ? FieldRefs.escapedFlag : 0)
    count += 1
  }

  /// Makes room for `capacity` references in all.
  func reserve(_ capacity: Int) {
    guard capacity > self.capacity else { return }
    starts = Self.reallocate(starts, capacity)
    lengths = Self.reallocate(lengths, capacity)
    self.capacity = capacity
  }

  private static func allocate(_ count: Int) -> UnsafeMutablePointer<UInt32> {
    guard let memory = malloc(count * MemoryLayout<UInt32>.stride) else { fatalError("out of memory") }
    return memory.bindMemory(to: UInt32.self, capacity: count)
  }

  private static func reallocate(_ pointer: UnsafeMutablePointer<UInt32>, _ count: Int)
    -> UnsafeMutablePointer<UInt32>
  {
    guard let memory = realloc(pointer, count * MemoryLayout<UInt32>.stride) else {
      fatalError("out of memory")
    }
    return memory.bindMemory(to: UInt32.self, capacity: count)
  }
}

/// One typed column of a table; a CSV column's type is inferred from all of its values.
///
/// Columns are classes behind a protocol so that reading a cell is a call on the column,
/// with no copy (and no reference counting) of its storage.
protocol Column: AnyObject, Sendable {
  var type: ValueType { get }
  func value(at row: Int) -> Value
  /// How many rows are null.
  var nullCount: Int { get }
  /// The column's type and nulls (a column of JSON values looks at them).
  func profile(name: String, rowCount: Int) -> FieldProfile
  /// The values at these rows, as an array of their type where the column has one.
  func batch(at rows: UnsafeBufferPointer<Int>) -> ValueBatch
}

extension Column {
  func batch(at rows: UnsafeBufferPointer<Int>) -> ValueBatch { .values(rows.map { value(at: $0) }) }
}

extension Column {
  func profile(name: String, rowCount: Int) -> FieldProfile {
    let nulls = nullCount
    return FieldProfile(name: name, type: nulls == rowCount && rowCount > 0 ? nil : type, nulls: nulls)
  }
}

extension NullMask {
  var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }
}

final class IntColumn: Column {
  let values: [Int]
  let nulls: NullMask?
  init(_ values: [Int], nulls: NullMask?) {
    self.values = values
    self.nulls = nulls
  }
  var type: ValueType { .int }
  var nullCount: Int { nulls?.count ?? 0 }
  func value(at row: Int) -> Value {
    if let nulls, nulls.isNull(row) { return .null }
    return .int(values[row])
  }
  func batch(at rows: UnsafeBufferPointer<Int>) -> ValueBatch {
    .ints(values.gathering(rows), nulls: nulls.map { mask in rows.map(mask.isNull) })
  }
}

extension Array {
  /// The elements at `rows`: rows one after another (what a pass over every row asks for) are
  /// copied whole.
  @inline(__always)
  func gathering(_ rows: UnsafeBufferPointer<Int>) -> [Element] {
    if let first = rows.first, let last = rows.last, last - first == rows.count - 1,
      !rows.indices.dropFirst().contains(where: { rows[$0] != rows[$0 - 1] + 1 })
    {
      return Array(self[first...last])
    }
    return rows.map { self[$0] }
  }
}

final class DoubleColumn: Column {
  let values: [Double]
  let nulls: NullMask?
  init(_ values: [Double], nulls: NullMask?) {
    self.values = values
    self.nulls = nulls
  }
  var type: ValueType { .double }
  var nullCount: Int { nulls?.count ?? 0 }
  func value(at row: Int) -> Value {
    if let nulls, nulls.isNull(row) { return .null }
    return .double(values[row])
  }
  func batch(at rows: UnsafeBufferPointer<Int>) -> ValueBatch {
    .doubles(values.gathering(rows), nulls: nulls.map { mask in rows.map(mask.isNull) })
  }
}

final class BoolColumn: Column {
  /// 0 false, 1 true, 2 null.
  let values: [UInt8]
  init(_ values: [UInt8]) { self.values = values }
  var type: ValueType { .bool }
  var nullCount: Int { values.reduce(0) { $0 + ($1 == 2 ? 1 : 0) } }
  func value(at row: Int) -> Value { values[row] == 2 ? .null : .bool(values[row] == 1) }
  func batch(at rows: UnsafeBufferPointer<Int>) -> ValueBatch { .bools(rows.map { values[$0] }) }
}

/// A column of texts one after another in its own bytes (``TextColumnBuilder``): where each
/// row's text is; a row of length 0 without the flag is null.
final class TextColumn: Column {
  let refs: FieldRefs
  let storage: SharedBytes
  init(_ refs: FieldRefs, storage: SharedBytes) {
    self.refs = refs
    self.storage = storage
  }
  var type: ValueType { .text }
  var nullCount: Int {
    var count = 0
    for row in 0..<refs.count where refs.lengths[row] == 0 { count += 1 }
    return count
  }
  func value(at row: Int) -> Value {
    Self.value(start: refs.starts[row], rawLength: refs.lengths[row], in: storage)
  }

  /// The texts stay in the column's bytes: a batch says where, and makes strings only when asked.
  func batch(at rows: UnsafeBufferPointer<Int>) -> ValueBatch {
    .texts(
      TextBatch(
        storage: storage, starts: rows.map { refs.starts[$0] }, lengths: rows.map { refs.lengths[$0] }))
  }

  /// The value of a text at `start` with its raw length (its escaped flag included).
  @inline(__always)
  static func value(start: UInt32, rawLength: UInt32, in storage: SharedBytes) -> Value {
    let length = Int(rawLength & FieldRefs.lengthMask)
    if length == 0 { return rawLength == 0 ? .null : .string("") }
    let field = UnsafeBufferPointer(rebasing: storage.buffer[Int(start)..<Int(start) + length])
    if rawLength & FieldRefs.escapedFlag != 0 { return .string(CSVReader.unescape(field)) }
    return .string(String(decoding: field, as: UTF8.self))
  }
}

/// Texts of a text column read in place: where each item's text sits in the column's bytes.
///
/// Strings are made only when asked for; grouping and comparing read the bytes.
///
/// `@unchecked Sendable`: the bytes are never written after the column is built (``SharedBytes``).
package struct TextBatch: @unchecked Sendable {
  let storage: SharedBytes
  let starts: [UInt32]
  /// Each text's length with ``FieldRefs/escapedFlag``.
  package let lengths: [UInt32]
  /// For a dictionary-coded column: each item's code into `dictionary` (0: null).
  var codes: [UInt16]? = nil
  var dictionary: TextDictionary? = nil

  package var count: Int { starts.count }

  package subscript(i: Int) -> Value {
    if let codes, let dictionary { return dictionary.values[Int(codes[i])] }
    return TextColumn.value(start: starts[i], rawLength: lengths[i], in: storage)
  }

  /// Item `i`'s text as its UTF-8 bytes, when they are stored as they are (not null, not
  /// quoted with doubled quotes inside, not empty); otherwise `nil`, and `self[i]` tells.
  @inline(__always)
  package func plainBytes(_ i: Int) -> UnsafeBufferPointer<UInt8>? {
    let rawLength = lengths[i]
    guard rawLength != 0, rawLength & FieldRefs.escapedFlag == 0 else { return nil }
    let start = Int(starts[i])
    return UnsafeBufferPointer(rebasing: storage.buffer[start..<start + Int(rawLength)])
  }
}

extension TextBatch {
  /// Item `i`'s text as its UTF-8 bytes, when they are stored as they are.
  ///
  /// Not null, not escaped, not empty, not coded by a dictionary; otherwise `nil`, and the
  /// batch's value at `i` tells. A writer copies a column's bytes from these without making a
  /// string.
  package func storedBytes(_ i: Int) -> UnsafeBufferPointer<UInt8>? { codes == nil ? plainBytes(i) : nil }
}

/// Dates (days) or timestamps (microseconds), as one array of ints.
final class DateColumn: Column {
  let values: [Int]
  let nulls: NullMask?
  let type: ValueType
  init(_ values: [Int], nulls: NullMask?, type: ValueType) {
    self.values = values
    self.nulls = nulls
    self.type = type
  }
  var nullCount: Int { nulls?.count ?? 0 }
  func value(at row: Int) -> Value {
    if let nulls, nulls.isNull(row) { return .null }
    return type == .date ? .date(values[row]) : .timestamp(values[row])
  }
}

/// Values read by a declared type (`types {…}`), held as they are.
final class ValueColumn: Column {
  let values: [Value]
  let type: ValueType
  init(_ values: [Value], type: ValueType) {
    self.values = values
    self.type = type
  }
  var nullCount: Int { values.reduce(0) { $0 + ($1.isNull ? 1 : 0) } }
  func value(at row: Int) -> Value { values[row] }
}

/// Texts that kept a column from a type.
///
/// A column of numbers but for `NA` is text because of `NA`. The shell says so at load, and in errors that compare the column with a number.
public struct Marker: Sendable, Equatable {
  /// The marker, as written.
  public var text: String
  /// Rows that hold it.
  public var count: Int
  /// What the column would be without its markers.
  public var wouldBe: ValueType

  /// A marker held by `count` rows of a column that would be `wouldBe` without it.
  public init(text: String, count: Int, wouldBe: ValueType) {
    self.text = text
    self.count = count
    self.wouldBe = wouldBe
  }
}

/// What is known of a field across a provider's items: the type of its values (`nil` when it
/// has none but null), the other types it holds too (schemaless sources), its nulls, and the
/// markers that made it text.
public struct FieldProfile: Sendable, Equatable {
  /// The field's name.
  public var name: String
  /// The type of its values, or `nil` when it has none but null.
  public var type: ValueType?
  /// Every type the field holds when it holds more than one (then `type` is `nil`).
  public var mixedTypes: [ValueType] = []
  /// How many items hold null, when known.
  public var nulls: Int?
  /// The markers that made a column of numbers or dates text.
  public var markers: [Marker] = []
  /// Why a column that looks like numbers or dates is text, when no marker says it.
  public var textReason: String?
  /// The name the source gave the field, when another field had it first (a CSV header that
  /// repeats a name): the field was named apart.
  public var renamedFrom: String?
  /// For a field of records whose fields are known without reading them (a join's match, a
  /// record of the other side's fields), their profiles: a path into it (`m.latitude`) is then
  /// checked and typed as a field is.
  public var fields: [FieldProfile]?

  /// A profile of a field.
  public init(
    name: String, type: ValueType?, mixedTypes: [ValueType] = [], nulls: Int?, markers: [Marker] = []
  ) {
    self.name = name
    self.type = type
    self.mixedTypes = mixedTypes
    self.nulls = nulls
    self.markers = markers
  }

  /// A field of records with these fields (a join's match): a path into it is checked against
  /// them; `nil` fields when they are not known.
  package static func record(_ name: String, fields: [FieldProfile]?) -> FieldProfile {
    var profile = FieldProfile(name: name, type: .record, nulls: nil)
    profile.fields = fields
    return profile
  }

  /// The same profile with its count of nulls unknown (for a filtered or edited view).
  public var withoutNullCount: FieldProfile {
    var profile = self
    profile.nulls = nil
    return profile
  }

  /// `bill_length_mm double (2 null)`.
  public var description: String {
    var text = name + " "
    if let type {
      text += type.rawValue
    } else if !mixedTypes.isEmpty {
      text += "mixed (" + mixedTypes.map(\.rawValue).joined(separator: ", ") + ")"
    } else {
      text += "null"
    }
    if let nulls, nulls > 0, type != nil || !mixedTypes.isEmpty { text += " (\(nulls) null)" }
    return text
  }
}

/// Works out a field's profile from its values, one at a time.
package struct FieldProfiler {
  private var types: Set<ValueType> = []
  private var nulls = 0
  /// Texts seen, with their counts, while there are few (they may be markers among numbers).
  private var texts: [String: Int] = [:]
  private var textOrder: [String] = []
  private var values = 0

  package init() {}

  package mutating func add(_ value: Value) {
    guard !value.isNull else {
      nulls += 1
      return
    }
    values += 1
    types.insert(value.type)
    if case .string(let text) = value, texts.count <= CSVReader.maximumMarkers {
      if texts[text] == nil { textOrder.append(text) }
      texts[text, default: 0] += 1
    }
  }

  package func profile(name: String) -> FieldProfile {
    // Ints and doubles mix as numbers.
    var kinds = types
    if kinds.contains(.int), kinds.contains(.double) { kinds.remove(.int) }
    if kinds.count == 1 { return FieldProfile(name: name, type: kinds.first, nulls: nulls) }
    var profile = FieldProfile(name: name, type: nil, mixedTypes: kinds.sorted(), nulls: nulls)
    // Numbers (or dates) but for a few texts: those texts are likely markers.
    let others = kinds.subtracting([.text])
    let markerCount = texts.values.reduce(0, +)
    if kinds.contains(.text), others.count == 1, let other = others.first,
      texts.count <= CSVReader.maximumMarkers,
      markerCount <= values - markerCount
    {
      profile.markers = textOrder.map { Marker(text: $0, count: texts[$0] ?? 0, wouldBe: other) }
    }
    return profile
  }

  /// The profile of every field of `items` (records), in first-seen order; `nil` when an item
  /// is not a record.
  /// - Complexity: O(items × fields).
  ///
  /// - Throws: ``DataSourceError/cancelled`` when the task is cancelled (^C): a view of millions
  ///   of computed items takes seconds to look at.
  package static func profiles(of items: some Sequence<Value>) throws(DataSourceError) -> [FieldProfile]? {
    var names: [String] = []
    var profilers: [String: FieldProfiler] = [:]
    var count = 0
    for item in items {
      if count & 0xFFFF == 0xFFFF, Task.isCancelled { throw DataSourceError.cancelled }
      guard case .record(let record) = item else { return nil }
      for (name, value) in zip(record.schema.names, record.values) {
        if profilers[name] == nil {
          names.append(name)
          var profiler = FieldProfiler()
          // Items before this one lacked the field: null there.
          profiler.nulls = count
          profilers[name] = profiler
        }
        profilers[name]?.add(value)
      }
      count += 1
      // Fields this item lacks are null in it.
      if record.schema.names.count < names.count {
        for name in names where record.schema.index(of: name) == nil { profilers[name]?.nulls += 1 }
      }
    }
    return names.compactMap { profilers[$0]?.profile(name: $0) }
  }
}

/// Rows stored by column: typed arrays for numbers and booleans, texts in their column's own
/// bytes (CSV: plain or dictionary-coded) or byte ranges into the file (JSON).
///
/// Records are made only when a row is asked for.
package final class ColumnTable: Sendable {
  // Immutable after init.
  package let schema: Schema
  package let rowCount: Int
  let columns: [any Column]
  /// For text columns that are numbers or dates but for a few texts: those texts.
  let markers: [String: [Marker]]
  /// For text columns whose values are of two types no one type holds exactly: why.
  let textReasons: [String: String]
  /// For columns named apart from another of the same name in the header: that name.
  let renamed: [String: String]

  init(
    schema: Schema, rowCount: Int, columns: [any Column], markers: [String: [Marker]] = [:],
    textReasons: [String: String] = [:], renamed: [String: String] = [:]
  ) {
    self.schema = schema
    self.rowCount = rowCount
    self.columns = columns
    self.markers = markers
    self.textReasons = textReasons
    self.renamed = renamed
  }

  /// The type of the column named `name`, when the table has one.
  package func type(ofColumn name: String) -> ValueType? { schema.index(of: name).map { columns[$0].type } }

  /// Whether every value of the column named `name` is null, empty or white space.
  ///
  /// Such a column is text only for its blanks (`""`, `"  "`): a number further down the file
  /// makes it a column of numbers, the blanks null.
  /// - Complexity: O(rows).
  package func holdsOnlyBlanks(_ name: String) -> Bool {
    guard let index = schema.index(of: name) else { return false }
    let column = columns[index]
    return (0..<rowCount).allSatisfy { row in
      switch column.value(at: row) {
      case .null: true
      case .string(let text): text.allSatisfy(\.isWhitespace)
      default: false
      }
    }
  }

  /// Each column's type, nulls and markers.
  /// - Complexity: O(rows × columns) the first time.
  package var profiles: [FieldProfile] {
    zip(schema.names, columns).map { name, column in
      var profile = column.profile(name: name, rowCount: rowCount)
      if let found = markers[name] { profile.markers = found }
      profile.textReason = textReasons[name]
      profile.renamedFrom = renamed[name]
      return profile
    }
  }

  /// The value of column `column` (by its place) at `row`.
  package func value(at row: Int, column: Int) -> Value { columns[column].value(at: row) }

  /// The record of a row.
  /// - Complexity: O(fields).
  package func record(at row: Int) -> Record {
    let values = [Value](unsafeUninitializedCapacity: columns.count) { buffer, count in
      for (c, column) in columns.enumerated() { buffer.initializeElement(at: c, to: column.value(at: row)) }
      count = columns.count
    }
    return Record(schema: schema, values: values)
  }
}
