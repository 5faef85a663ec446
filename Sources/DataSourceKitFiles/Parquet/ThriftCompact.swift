import DataSourceKit
import DataSourceKitValues
import Foundation

// Parquet's footer and page headers are Thrift structures in the compact protocol: fields
// numbered by their delta from the last, ints as zigzag varints, lists with their element type.
// The reader is enough for parquet.thrift: a field dsh does not read is skipped whatever its
// type, so a writer's newer fields are no trouble. The writer writes what `export … to
// "x.parquet"` needs: a footer and page headers.

/// The variable-length integers Thrift's compact protocol and Parquet's encodings share: seven
/// bits a byte, the lowest first (ULEB128), and signed ones zigzagged.
enum Varint {
  /// The varint at `position`, which moves past it; `nil` when the bytes end first or it runs
  /// past 64 bits.
  static func read(_ bytes: UnsafeRawBufferPointer, at position: inout Int) -> UInt64? {
    var result: UInt64 = 0
    var shift: UInt64 = 0
    while position < bytes.count, shift < 64 {
      let b = bytes[position]
      position += 1
      result |= UInt64(b & 0x7F) << shift
      if b & 0x80 == 0 { return result }
      shift += 7
    }
    return nil
  }

  /// A zigzagged value's signed one: 0, 1, 2, 3 are 0, -1, 1, -2.
  static func zigzag(_ n: UInt64) -> Int64 { Int64(bitPattern: (n >> 1) ^ (0 &- (n & 1))) }
}

/// A Thrift compact-protocol reader over bytes held in memory.
struct ThriftReader {
  /// The compact protocol's type of a field or an element.
  enum FieldType: UInt8 {
    case stop = 0, boolTrue = 1, boolFalse = 2, byte = 3, i16 = 4, i32 = 5, i64 = 6, double = 7
    case binary = 8, list = 9, set = 10, map = 11, structure = 12
  }

  private let bytes: UnsafeRawBufferPointer
  /// Where the next byte is read.
  private(set) var position: Int
  /// The last field id of each struct being read, innermost last.
  private var lastFieldIDs: [Int16] = [0]
  /// How deep the value being skipped lies.
  private var skipping = 0
  /// Where a damaged structure is reported: the file, and what was being read.
  private let place: () -> DataSourceError

  /// A reader of `bytes` from `position`; `damaged` makes the error for bytes that do not read.
  init(_ bytes: UnsafeRawBufferPointer, at position: Int = 0, damaged: @escaping () -> DataSourceError) {
    self.bytes = bytes
    self.position = position
    place = damaged
  }

  /// Structures nest no deeper than this: a file made to recurse is refused, not followed.
  private static let deepest = 64

  /// A byte as it is: an i8 field, or a list's boolean element.
  mutating func rawByte() throws(DataSourceError) -> UInt8 { try byte() }

  private mutating func byte() throws(DataSourceError) -> UInt8 {
    guard position < bytes.count else { throw place() }
    defer { position += 1 }
    return bytes[position]
  }

  /// An unsigned varint (at most ten bytes).
  mutating func varint() throws(DataSourceError) -> UInt64 {
    guard let value = Varint.read(bytes, at: &position) else { throw place() }
    return value
  }

  /// A zigzag varint: an i16, i32 or i64.
  mutating func int() throws(DataSourceError) -> Int64 { Varint.zigzag(try varint()) }

  /// An i32, refused when it does not fit.
  mutating func int32() throws(DataSourceError) -> Int32 {
    let n = try int()
    guard let value = Int32(exactly: n) else { throw place() }
    return value
  }

  /// A binary or a string's bytes.
  mutating func binary() throws(DataSourceError) -> UnsafeRawBufferPointer {
    let length = try varint()
    guard length <= UInt64(bytes.count - position) else { throw place() }
    defer { position += Int(length) }
    return UnsafeRawBufferPointer(rebasing: bytes[position..<position + Int(length)])
  }

  /// A string (UTF-8, damaged bytes repaired).
  mutating func string() throws(DataSourceError) -> String {
    String(decoding: try binary(), as: UTF8.self)
  }

  /// The next field of the struct being read: its id and type, or `nil` at the struct's end.
  ///
  /// A boolean field's value is its type (``FieldType/boolTrue``, ``FieldType/boolFalse``).
  mutating func field() throws(DataSourceError) -> (id: Int16, type: FieldType)? {
    let header = try byte()
    guard let type = FieldType(rawValue: header & 0x0F) else { throw place() }
    if type == .stop { return nil }
    let delta = Int16(header >> 4)
    let id: Int16
    if delta == 0 {
      guard let read = Int16(exactly: try int()) else { throw place() }
      id = read
    } else {
      id = lastFieldIDs[lastFieldIDs.count - 1] &+ delta
    }
    lastFieldIDs[lastFieldIDs.count - 1] = id
    return (id, type)
  }

  /// A list's (or set's) element type and length.
  mutating func listHeader() throws(DataSourceError) -> (type: FieldType, count: Int) {
    let header = try byte()
    guard let type = FieldType(rawValue: header & 0x0F) else { throw place() }
    var count = Int(header >> 4)
    if count == 15 {
      let long = try varint()
      guard long <= UInt64(bytes.count - position) else { throw place() }
      count = Int(long)
    }
    return (type, count)
  }

  /// Reads a struct's fields, calling `body` with each field's id and type; `body` reads the
  /// fields it knows and returns `false` for the rest, which are skipped.
  mutating func structure(
    _ body: (inout ThriftReader, Int16, FieldType) throws(DataSourceError) -> Bool
  ) throws(DataSourceError) {
    guard lastFieldIDs.count < Self.deepest else { throw place() }
    lastFieldIDs.append(0)
    while let (id, type) = try field() {
      if try !body(&self, id, type) { try skip(type) }
    }
    lastFieldIDs.removeLast()
  }

  /// Reads a list's elements, each by `element` (which reads one element of the given type).
  mutating func list<T>(_ element: (inout ThriftReader, FieldType) throws(DataSourceError) -> T)
    throws(DataSourceError) -> [T]
  {
    let (type, count) = try listHeader()
    var result: [T] = []
    result.reserveCapacity(min(count, 1 << 16))
    for _ in 0..<count { result.append(try element(&self, type)) }
    return result
  }

  /// Skips a value of `type`.
  mutating func skip(_ type: FieldType) throws(DataSourceError) {
    // Lists of lists nest as structs do: no deeper than they may.
    guard skipping < Self.deepest else { throw place() }
    skipping += 1
    defer { skipping -= 1 }
    switch type {
    case .stop, .boolTrue, .boolFalse: break
    case .byte: _ = try byte()
    case .i16, .i32, .i64: _ = try varint()
    case .double:
      guard position + 8 <= bytes.count else { throw place() }
      position += 8
    case .binary: _ = try binary()
    case .list, .set:
      let (element, count) = try listHeader()
      for _ in 0..<count {
        // A boolean element is a byte of its own.
        if element == .boolTrue || element == .boolFalse { _ = try byte() } else { try skip(element) }
      }
    case .map:
      let count = try varint()
      guard count <= UInt64(bytes.count - position) else { throw place() }
      if count > 0 {
        let kinds = try byte()
        guard let key = FieldType(rawValue: kinds >> 4), let value = FieldType(rawValue: kinds & 0x0F) else {
          throw place()
        }
        // A boolean key or value is a byte of its own, as in a list.
        func skipElement(_ type: FieldType) throws(DataSourceError) {
          if type == .boolTrue || type == .boolFalse { _ = try byte() } else { try skip(type) }
        }
        for _ in 0..<count {
          try skipElement(key)
          try skipElement(value)
        }
      }
    case .structure:
      try structure { _, _, _ throws(DataSourceError) in false }
    }
  }
}

/// A Thrift compact-protocol writer: a struct's fields in increasing order, each written by its
/// id's delta from the one before.
struct ThriftWriter {
  private(set) var bytes: [UInt8] = []
  /// The last field id written in each struct being written, innermost last.
  private var lastFieldIDs: [Int16] = [0]

  private mutating func varint(_ value: UInt64) {
    var n = value
    while n >= 0x80 {
      bytes.append(UInt8(n & 0x7F) | 0x80)
      n >>= 7
    }
    bytes.append(UInt8(n))
  }

  private mutating func zigzag(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

  private mutating func fieldHeader(_ id: Int16, _ type: ThriftReader.FieldType) {
    let delta = id - lastFieldIDs[lastFieldIDs.count - 1]
    if delta > 0, delta <= 15 {
      bytes.append(UInt8(delta) << 4 | type.rawValue)
    } else {
      bytes.append(type.rawValue)
      zigzag(Int64(id))
    }
    lastFieldIDs[lastFieldIDs.count - 1] = id
  }

  /// Field `id`, an i32.
  mutating func int32(_ id: Int16, _ value: Int32) {
    fieldHeader(id, .i32)
    zigzag(Int64(value))
  }

  /// Field `id`, an i64.
  mutating func int64(_ id: Int16, _ value: Int64) {
    fieldHeader(id, .i64)
    zigzag(value)
  }

  /// Field `id`, a boolean (its value is its type).
  mutating func bool(_ id: Int16, _ value: Bool) { fieldHeader(id, value ? .boolTrue : .boolFalse) }

  /// Field `id`, bytes.
  mutating func binary(_ id: Int16, _ value: [UInt8]) {
    fieldHeader(id, .binary)
    varint(UInt64(value.count))
    bytes += value
  }

  /// Field `id`, a string.
  mutating func string(_ id: Int16, _ value: String) { binary(id, Array(value.utf8)) }

  /// Field `id`, a struct whose fields `body` writes.
  mutating func structure(_ id: Int16, _ body: (inout ThriftWriter) -> Void) {
    fieldHeader(id, .structure)
    structBody(body)
  }

  /// A struct's fields and its end, without a field header (a list's element, or the outermost).
  mutating func structBody(_ body: (inout ThriftWriter) -> Void) {
    lastFieldIDs.append(0)
    body(&self)
    bytes.append(ThriftReader.FieldType.stop.rawValue)
    lastFieldIDs.removeLast()
  }

  /// Field `id`, a list of `count` elements of `type`, each written by `element`.
  mutating func list(
    _ id: Int16, of type: ThriftReader.FieldType, count: Int, _ element: (inout ThriftWriter, Int) -> Void
  ) {
    fieldHeader(id, .list)
    if count < 15 {
      bytes.append(UInt8(count) << 4 | type.rawValue)
    } else {
      bytes.append(0xF0 | type.rawValue)
      varint(UInt64(count))
    }
    for index in 0..<count { element(&self, index) }
  }

  /// A list's i32 element.
  mutating func element(_ value: Int32) { zigzag(Int64(value)) }

  /// A list's string element.
  mutating func element(_ value: String) {
    varint(UInt64(value.utf8.count))
    bytes += value.utf8
  }
}
