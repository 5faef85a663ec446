import Foundation
import Testing

@testable import DataSourceKit
@testable import DataSourceKitFiles
@testable import DataSourceKitValues

/// Parquet's encodings over bytes written by hand: what a damaged or hostile file can say is
/// refused or bounded, never followed into a crash or an allocation the bytes did not pay for.
@Suite("Parquet's encodings over bytes written by hand")
struct ParquetDecodingTests {
  /// `body` over a page of `bytes`.
  static func reading<R>(_ bytes: [UInt8], _ body: (inout PageBytes) throws(DataSourceError) -> R)
    throws(DataSourceError) -> R
  {
    try withBytes(of: bytes) { raw throws(DataSourceError) in
      var page = PageBytes(raw, damaged: { .unreadable(path: "t", reason: "damaged") })
      return try body(&page)
    }
  }

  @Test("the RLE/bit-packed hybrid: runs of one value, bit-packed groups, and what damaged bytes say")
  func hybrid() throws {
    // A run of 5 threes (width 2: one byte), then one group of eight bit-packed values 0…7 of
    // width 3 (three bytes), of which six are wanted.
    let values = try Self.reading([5 << 1, 3, 1 << 1 | 1, 0b1000_1000, 0b1100_0110, 0b1111_1010]) {
      page throws(DataSourceError) in try page.hybrid(11, width: 2 + 1)
    }
    #expect(values == [3, 3, 3, 3, 3, 0, 1, 2, 3, 4, 5])
    // A bit-packed run of width 0 that says it holds four billion values: the three wanted.
    let zeros = try Self.reading([0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) { page throws(DataSourceError) in
      try page.hybrid(3, width: 0)
    }
    #expect(zeros == [0, 0, 0])
    // A run's value wider than the width (a boolean of 2) is damage, not a value.
    #expect(throws: DataSourceError.self) {
      try Self.reading([4 << 1, 2]) { page throws(DataSourceError) in try page.hybrid(4, width: 1) }
    }
    // Bytes that end before the values do.
    #expect(throws: DataSourceError.self) {
      try Self.reading([2 << 1 | 1, 0xFF]) { page throws(DataSourceError) in try page.hybrid(16, width: 8) }
    }
  }

  @Test("DELTA_BINARY_PACKED: a block of deltas, and headers that ask for more than the page")
  func deltas() throws {
    // Block of 128 in 4 miniblocks of 32, 5 values, first 7; min delta -1, widths 2,0,0,0; the
    // deltas (as stored: delta - min) 2, 0, 1, 2, then padding to 32 values of two bits.
    var bytes: [UInt8] = [0x80, 0x01, 4, 5, 14]
    bytes += [1, 2, 0, 0, 0]
    bytes += [0b10_01_00_10, 0, 0, 0, 0, 0, 0, 0]
    let values = try Self.reading(bytes) { page throws(DataSourceError) in try page.deltaBinaryPacked(5) }
    #expect(values == [7, 8, 7, 7, 8])
    // A block of 2^40 values, or more values than the page was asked for: refused.
    #expect(throws: DataSourceError.self) {
      try Self.reading([0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 4, 5, 14]) { page throws(DataSourceError) in
        try page.deltaBinaryPacked(5)
      }
    }
    #expect(throws: DataSourceError.self) {
      try Self.reading([0x80, 0x01, 4, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 14]) { page throws(DataSourceError) in
        try page.deltaBinaryPacked(5)
      }
    }
  }

  @Test("a float is the double of the decimal it prints as, read back exactly as strtod reads it")
  func floats() {
    var random = SplitMix64(state: 59)
    var floats: [Float] = [
      43.22, -0.1, 1e-10, 3.4028235e38, .leastNonzeroMagnitude, 16_777_216, 0.3, 1e22, 1e23, -2.5e-7,
    ]
    for _ in 0..<100_000 {
      floats.append(Float(bitPattern: UInt32(truncatingIfNeeded: random.next())))
    }
    var differing: [Float] = []
    for float in floats where float.isFinite {
      let expected = Double(float.description) ?? .nan
      if PageBytes.double(float).bitPattern != expected.bitPattern { differing.append(float) }
    }
    #expect(differing.isEmpty, "\(differing.prefix(5))")
    #expect(PageBytes.double(43.22) == 43.22)
  }

  /// A varint's bytes, seven bits a byte, the lowest first.
  static func varint(_ value: UInt64) -> [UInt8] {
    var value = value
    var bytes: [UInt8] = []
    repeat {
      bytes.append(UInt8(value & 0x7F) | (value >= 0x80 ? 0x80 : 0))
      value >>= 7
    } while value > 0
    return bytes
  }

  @Test(
    "statistics that claim more nulls than their row group has rows are not taken (their sum once overflowed)"
  )
  func hostileNullCounts() throws {
    // Two row groups of one row each; each chunk's statistics claim Int64.max nulls.
    var chunk: [UInt8] = [0x19, 0x1C, 0x3C]  // columns: a list of one ColumnChunk; its meta_data
    chunk += [0x15, 0x04, 0x46, 0x02, 0x46, 0x08]  // type INT64, one value, data page at 4
    chunk += [0x3C, 0x36] + Self.varint(UInt64.max - 1) + [0x00]  // statistics: null_count
    chunk += [0x00, 0x00, 0x26, 0x02, 0x00]  // end of meta_data and chunk; num_rows 1; end
    var footer: [UInt8] = [0x15, 0x02, 0x19, 0x2C]
    footer += [0x48, 0x01, UInt8(ascii: "r"), 0x15, 0x02, 0x00]
    footer += [0x15, 0x04, 0x25, 0x02, 0x18, 0x02, UInt8(ascii: "i"), UInt8(ascii: "d"), 0x00]
    footer += [0x16, 0x04, 0x19, 0x2C] + chunk + chunk + [0x00]
    let length = UInt32(footer.count)
    let magic = Array("PAR1".utf8)
    let file =
      magic + [0, 0, 0, 0] + footer + [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: length >> $0) } + magic
    let profiles = try withBytes(of: file) { raw throws(DataSourceError) in
      try ParquetTable(.memory(raw, displayPath: "nulls.parquet")).profiles
    }
    #expect(profiles.count == 1 && profiles[0].name == "id" && profiles[0].nulls == nil, "\(profiles)")
    #expect(profiles[0].type == .int)
  }

  @Test("a footer that claims more rows than dsh reads at once is refused before anything is made for them")
  func tooManyRows() throws {
    // FileMetaData: version 1; a schema of a root and one int64 column; 2^40 rows; no row groups.
    var footer: [UInt8] = [0x15, 0x02, 0x19, 0x2C]
    footer += [0x48, 0x01, UInt8(ascii: "r"), 0x15, 0x02, 0x00]
    footer += [0x15, 0x04, 0x25, 0x00, 0x18, 0x02, UInt8(ascii: "i"), UInt8(ascii: "d"), 0x00]
    footer += [0x16] + Self.varint(UInt64(1) << 41) + [0x19, 0x0C, 0x00]
    let length = UInt32(footer.count)
    let magic = Array("PAR1".utf8)
    let file = magic + footer + [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: length >> $0) } + magic
    do {
      _ = try withBytes(of: file) { raw throws(DataSourceError) in
        try ParquetReader.read(raw, displayPath: "big.parquet")
      }
      Issue.record("a file of 2^40 rows was read")
    } catch {
      #expect(error.description.contains("1,099,511,627,776 rows, more than dsh reads at once"), "\(error)")
    }
  }

  @Test("Thrift's compact protocol: a struct's fields by their deltas, and nesting without end refused")
  func thrift() throws {
    // Field 1 (i32) = 150, field 4 (binary) = "ab", field 5 (i32) = -1, stop.
    let bytes: [UInt8] = [0x15, 0xAC, 0x02, 0x38, 2, 0x61, 0x62, 0x15, 0x01, 0x00]
    var seen: [String] = []
    try withBytes(of: bytes) { raw throws(DataSourceError) in
      var reader = ThriftReader(raw, damaged: { .unreadable(path: "t", reason: "damaged") })
      try reader.structure { r, id, type throws(DataSourceError) in
        switch (id, type) {
        case (1, .i32), (5, .i32): seen.append("\(id)=\(try r.int32())")
        case (4, .binary): seen.append("\(id)=\(try r.string())")
        default: return false
        }
        return true
      }
    }
    #expect(seen == ["1=150", "4=ab", "5=-1"])
    // A struct in a struct in a struct … a thousand deep: refused, not followed off the stack.
    let deep = [UInt8](repeating: 0x1C, count: 1_000) + [UInt8](repeating: 0, count: 1_001)
    #expect(throws: DataSourceError.self) {
      try withBytes(of: deep) { raw throws(DataSourceError) in
        var reader = ThriftReader(raw, damaged: { .unreadable(path: "t", reason: "damaged") })
        try reader.skip(.structure)
      }
    }
  }
}
