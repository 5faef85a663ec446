import DataSourceKit
import DataSourceKitValues
import Foundation

// The parts of a Parquet file's footer dsh reads (parquet.thrift's FileMetaData, SchemaElement,
// RowGroup, ColumnChunk, ColumnMetaData) and of each page's header, with the field numbers
// the format gives them.

/// A column's physical type.
enum ParquetPhysicalType: Int32 {
  case boolean = 0, int32 = 1, int64 = 2, int96 = 3, float = 4, double = 5, byteArray = 6
  case fixedLengthByteArray = 7
}

/// How a page's values (or levels) are written.
enum ParquetEncoding: Int32 {
  case plain = 0, plainDictionary = 2, rle = 3, bitPacked = 4, deltaBinaryPacked = 5
  case deltaLengthByteArray = 6, deltaByteArray = 7, rleDictionary = 8, byteStreamSplit = 9
}

/// How a column chunk's pages are compressed.
enum ParquetCodec: Int32 {
  case uncompressed = 0, snappy = 1, gzip = 2, lzo = 3, brotli = 4, lz4 = 5, zstd = 6, lz4Raw = 7
}

/// The unit of a timestamp or time column.
enum ParquetTimeUnit {
  case millis, micros, nanos
}

/// What a column's values mean, beyond their physical type (the logical type, or the older
/// converted type).
enum ParquetMeaning: Equatable {
  case none
  case string
  case date
  case timestamp(ParquetTimeUnit, utc: Bool)
  case time(ParquetTimeUnit)
  case decimal(scale: Int, precision: Int)
  case integer(bits: Int, signed: Bool)
  case uuid
  case json
  case enumeration
  /// Nested (a list or a map), or a meaning dsh does not read.
  case other(String)
}

/// One element of the schema, flattened as the footer lists them (a group, then its children).
struct ParquetSchemaElement {
  var name = ""
  var type: ParquetPhysicalType?
  var typeLength: Int32 = 0
  /// 0 required, 1 optional, 2 repeated.
  var repetition: Int32 = 0
  var childCount: Int32 = 0
  var meaning = ParquetMeaning.none
  var convertedType: Int32?
  var scale: Int32 = 0
  var precision: Int32 = 0
}

/// A column chunk: where its pages are and how they are written.
struct ParquetColumnChunk {
  var type: ParquetPhysicalType?
  var path: [String] = []
  /// The codec as the file writes it (``ParquetCodec`` when dsh knows it).
  var codec: Int32 = 0
  var valueCount: Int64 = 0
  var totalCompressedSize: Int64 = 0
  var dataPageOffset: Int64 = 0
  var dictionaryPageOffset: Int64?
  /// The file holding the chunk, when not this one (not read by dsh).
  var filePath: String?
  /// How many of its values are null, when its statistics say.
  var nullCount: Int64?
  /// Its least and greatest values as PLAIN writes one (text without its length), when its
  /// statistics say: `min_value` and `max_value`, ordered as the column's type orders.
  var minimum: [UInt8]?
  var maximum: [UInt8]?
  /// The older `min` and `max`, ordered by signed comparison: trusted for numbers alone.
  var legacyMinimum: [UInt8]?
  var legacyMaximum: [UInt8]?

  /// Where its first page starts: its dictionary's, when it has one before its data.
  var firstPageOffset: Int64 {
    if let dictionary = dictionaryPageOffset, dictionary > 0, dictionary < dataPageOffset {
      return dictionary
    }
    return dataPageOffset
  }
}

/// A row group: its rows and a chunk for each column.
struct ParquetRowGroup {
  var rowCount: Int64 = 0
  var columns: [ParquetColumnChunk] = []
}

/// A file's footer.
struct ParquetFileMetadata {
  var rowCount: Int64 = 0
  var schema: [ParquetSchemaElement] = []
  var rowGroups: [ParquetRowGroup] = []
  var createdBy: String?
}

/// A page's header.
struct ParquetPageHeader {
  /// 0 data, 1 index, 2 dictionary, 3 data v2.
  var type: Int32 = 0
  var uncompressedSize: Int32 = 0
  var compressedSize: Int32 = 0
  var valueCount: Int32 = 0
  /// The values' encoding as the file writes it (``ParquetEncoding`` when dsh knows it).
  var encoding: Int32 = 0
  var definitionLevelEncoding: Int32 = 3
  // Data page v2 only.
  var nullCount: Int32 = 0
  var rowCount: Int32 = 0
  var definitionLevelsLength: Int32 = 0
  var repetitionLevelsLength: Int32 = 0
  var isCompressed = true
}

extension ThriftReader {
  /// An i32 enum's value as `E`, refused when the file names a value the format does not.
  mutating func enumeration<E: RawRepresentable>(_: E.Type) throws(DataSourceError) -> E?
  where E.RawValue == Int32 {
    E(rawValue: try int32())
  }

  /// The footer.
  mutating func fileMetadata() throws(DataSourceError) -> ParquetFileMetadata {
    var metadata = ParquetFileMetadata()
    try structure { reader, id, type throws(DataSourceError) in
      switch (id, type) {
      case (2, .list):
        metadata.schema = try reader.list { r, _ throws(DataSourceError) in try r.schemaElement() }
      case (3, .i64): metadata.rowCount = try reader.int()
      case (4, .list):
        metadata.rowGroups = try reader.list { r, _ throws(DataSourceError) in try r.rowGroup() }
      case (6, .binary): metadata.createdBy = try reader.string()
      default: return false
      }
      return true
    }
    return metadata
  }

  private mutating func schemaElement() throws(DataSourceError) -> ParquetSchemaElement {
    var element = ParquetSchemaElement()
    try structure { reader, id, type throws(DataSourceError) in
      switch (id, type) {
      case (1, .i32): element.type = try reader.enumeration(ParquetPhysicalType.self)
      case (2, .i32): element.typeLength = try reader.int32()
      case (3, .i32): element.repetition = try reader.int32()
      case (4, .binary): element.name = try reader.string()
      case (5, .i32): element.childCount = try reader.int32()
      case (6, .i32): element.convertedType = try reader.int32()
      case (7, .i32): element.scale = try reader.int32()
      case (8, .i32): element.precision = try reader.int32()
      case (10, .structure): element.meaning = try reader.logicalType()
      default: return false
      }
      return true
    }
    if element.meaning == .none, let converted = element.convertedType {
      element.meaning = Self.meaning(converted: converted, scale: element.scale, precision: element.precision)
    }
    return element
  }

  /// The meaning an older writer gives by a converted type.
  private static func meaning(converted: Int32, scale: Int32, precision: Int32) -> ParquetMeaning {
    switch converted {
    case 0: .string
    case 4: .enumeration
    case 5: .decimal(scale: Int(scale), precision: Int(precision))
    case 6: .date
    case 7: .time(.millis)
    case 8: .time(.micros)
    case 9: .timestamp(.millis, utc: true)
    case 10: .timestamp(.micros, utc: true)
    case 11: .integer(bits: 8, signed: false)
    case 12: .integer(bits: 16, signed: false)
    case 13: .integer(bits: 32, signed: false)
    case 14: .integer(bits: 64, signed: false)
    case 15: .integer(bits: 8, signed: true)
    case 16: .integer(bits: 16, signed: true)
    case 17: .integer(bits: 32, signed: true)
    case 18: .integer(bits: 64, signed: true)
    case 19: .json
    case 1, 2: .other("map")
    case 3: .other("list")
    case 20: .other("bson")
    case 21: .other("interval")
    default: .other("converted type \(converted)")
    }
  }

  /// A logical type (a union: the one field set says which).
  private mutating func logicalType() throws(DataSourceError) -> ParquetMeaning {
    var meaning = ParquetMeaning.none
    try structure { reader, id, type throws(DataSourceError) in
      guard type == .structure else { return false }
      switch id {
      case 1: meaning = .string
      case 2: meaning = .other("map")
      case 3: meaning = .other("list")
      case 4: meaning = .enumeration
      case 5:
        var (scale, precision) = (0, 0)
        try reader.structure { r, field, kind throws(DataSourceError) in
          switch (field, kind) {
          case (1, .i32): scale = Int(try r.int32())
          case (2, .i32): precision = Int(try r.int32())
          default: return false
          }
          return true
        }
        meaning = .decimal(scale: scale, precision: precision)
        return true
      case 6: meaning = .date
      case 7, 8:
        var utc = false
        var unit = ParquetTimeUnit.micros
        try reader.structure { r, field, kind throws(DataSourceError) in
          switch (field, kind) {
          case (1, .boolTrue): utc = true
          case (1, .boolFalse): utc = false
          case (2, .structure): unit = try r.timeUnit()
          default: return false
          }
          return true
        }
        meaning = id == 7 ? .time(unit) : .timestamp(unit, utc: utc)
        return true
      case 10:
        var (bits, signed) = (64, true)
        try reader.structure { r, field, kind throws(DataSourceError) in
          switch (field, kind) {
          case (1, .byte): bits = Int(Int8(bitPattern: try r.rawByte()))
          case (2, .boolTrue): signed = true
          case (2, .boolFalse): signed = false
          default: return false
          }
          return true
        }
        meaning = .integer(bits: bits, signed: signed)
        return true
      // UNKNOWN: a column of nulls alone (pyarrow's null type), read by its physical type.
      case 11: meaning = .none
      case 12: meaning = .json
      case 13: meaning = .other("bson")
      case 14: meaning = .uuid
      case 15: meaning = .other("float16")
      default: meaning = .other("logical type \(id)")
      }
      // An empty struct (StringType, DateType, …): skipped by the caller.
      return false
    }
    return meaning
  }

  private mutating func timeUnit() throws(DataSourceError) -> ParquetTimeUnit {
    var unit = ParquetTimeUnit.micros
    try structure { _, id, type throws(DataSourceError) in
      guard type == .structure else { return false }
      switch id {
      case 1: unit = .millis
      case 2: unit = .micros
      case 3: unit = .nanos
      default: break
      }
      return false
    }
    return unit
  }

  private mutating func rowGroup() throws(DataSourceError) -> ParquetRowGroup {
    var group = ParquetRowGroup()
    try structure { reader, id, type throws(DataSourceError) in
      switch (id, type) {
      case (1, .list): group.columns = try reader.list { r, _ throws(DataSourceError) in try r.columnChunk() }
      case (3, .i64): group.rowCount = try reader.int()
      default: return false
      }
      return true
    }
    return group
  }

  private mutating func columnChunk() throws(DataSourceError) -> ParquetColumnChunk {
    var chunk = ParquetColumnChunk()
    try structure { reader, id, type throws(DataSourceError) in
      switch (id, type) {
      case (1, .binary): chunk.filePath = try reader.string()
      case (3, .structure):
        try reader.structure { r, field, kind throws(DataSourceError) in
          switch (field, kind) {
          case (1, .i32): chunk.type = try r.enumeration(ParquetPhysicalType.self)
          case (3, .list): chunk.path = try r.list { e, _ throws(DataSourceError) in try e.string() }
          case (4, .i32): chunk.codec = try r.int32()
          case (5, .i64): chunk.valueCount = try r.int()
          case (7, .i64): chunk.totalCompressedSize = try r.int()
          case (9, .i64): chunk.dataPageOffset = try r.int()
          case (11, .i64): chunk.dictionaryPageOffset = try r.int()
          case (12, .structure):
            try r.structure { statistics, field, kind throws(DataSourceError) in
              switch (field, kind) {
              case (1, .binary): chunk.legacyMaximum = Array(try statistics.binary())
              case (2, .binary): chunk.legacyMinimum = Array(try statistics.binary())
              case (3, .i64): chunk.nullCount = try statistics.int()
              case (5, .binary): chunk.maximum = Array(try statistics.binary())
              case (6, .binary): chunk.minimum = Array(try statistics.binary())
              default: return false
              }
              return true
            }
          default: return false
          }
          return true
        }
      default: return false
      }
      return true
    }
    return chunk
  }

  /// A page's header.
  mutating func pageHeader() throws(DataSourceError) -> ParquetPageHeader {
    var header = ParquetPageHeader()
    try structure { reader, id, type throws(DataSourceError) in
      switch (id, type) {
      case (1, .i32): header.type = try reader.int32()
      case (2, .i32): header.uncompressedSize = try reader.int32()
      case (3, .i32): header.compressedSize = try reader.int32()
      case (5, .structure):
        try reader.structure { r, field, kind throws(DataSourceError) in
          switch (field, kind) {
          case (1, .i32): header.valueCount = try r.int32()
          case (2, .i32): header.encoding = try r.int32()
          case (3, .i32): header.definitionLevelEncoding = try r.int32()
          default: return false
          }
          return true
        }
      case (7, .structure):
        try reader.structure { r, field, kind throws(DataSourceError) in
          switch (field, kind) {
          case (1, .i32): header.valueCount = try r.int32()
          case (2, .i32): header.encoding = try r.int32()
          default: return false
          }
          return true
        }
      case (8, .structure):
        try reader.structure { r, field, kind throws(DataSourceError) in
          switch (field, kind) {
          case (1, .i32): header.valueCount = try r.int32()
          case (2, .i32): header.nullCount = try r.int32()
          case (3, .i32): header.rowCount = try r.int32()
          case (4, .i32): header.encoding = try r.int32()
          case (5, .i32): header.definitionLevelsLength = try r.int32()
          case (6, .i32): header.repetitionLevelsLength = try r.int32()
          case (7, .boolTrue): header.isCompressed = true
          case (7, .boolFalse): header.isCompressed = false
          default: return false
          }
          return true
        }
      default: return false
      }
      return true
    }
    return header
  }
}
