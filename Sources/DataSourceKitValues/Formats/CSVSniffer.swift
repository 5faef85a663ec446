import Foundation

extension CSVDialect {
  /// The bytes a file may separate its fields with besides a comma, in the order they are tried.
  static let otherDelimiters: [UInt8] = [UInt8(ascii: ";"), UInt8(ascii: "\t"), UInt8(ascii: "|")]
  /// How much of a file's start is read to find its delimiter.
  static let sniffedBytes = 64 << 10
  /// The most read to find it, when the header and a row after it are longer than that.
  static let mostSniffedBytes = 16 << 20
  /// How many rows after the header must agree with it.
  static let sniffedRows = 20

  /// This dialect with the delimiter `file` is written with.
  ///
  /// The delimiter is the first of `;`, a tab and `|`
  /// that the header (after the lines skipped) holds, with no comma, and that each complete row
  /// read after it holds as many times (outside quotes); else the comma. A file of one column
  /// with a `;` in its name and none in its rows stays one column.
  package func found(in file: OpenFile) -> CSVDialect {
    var dialect = self
    dialect.findsDelimiter = false
    // A header of thousands of columns may be longer than the bytes read: more are read, up to
    // ``mostSniffedBytes``, until it and a row after it are whole.
    var size = Self.sniffedBytes
    var rows: ArraySlice<[UInt8: Int]> = []
    while true {
      var buffer = [UInt8](repeating: 0, count: size)
      let read = buffer.withUnsafeMutableBytes { pread(file.descriptor, $0.baseAddress, $0.count, 0) }
      guard read > 0 else { return dialect }
      // The lines skipped are passed over whatever they hold.
      var start = 0
      for _ in 0..<skippedLines {
        guard let end = buffer[start..<read].firstIndex(of: UInt8(ascii: "\n")) else { return dialect }
        start = end + 1
      }
      let whole = read < size
      rows = Self.rows(of: buffer[start..<read], complete: whole).prefix(Self.sniffedRows + 1)
      if rows.count >= 2 || whole || size >= Self.mostSniffedBytes { break }
      size *= 4
    }
    guard let header = rows.first, header[UInt8(ascii: ",")] == nil else { return dialect }
    for candidate in Self.otherDelimiters {
      guard let count = header[candidate], count > 0 else { continue }
      if rows.dropFirst().allSatisfy({ $0[candidate] == count }) {
        dialect.delimiter = candidate
        return dialect
      }
    }
    return dialect
  }

  /// How many times each byte of interest stands outside quotes in each row of `bytes` (a row
  /// ends at a line end outside quotes; blank rows are left out, and the last row when it may
  /// be cut short).
  private static func rows(of bytes: ArraySlice<UInt8>, complete: Bool) -> [[UInt8: Int]] {
    var rows: [[UInt8: Int]] = []
    var counts: [UInt8: Int] = [:]
    var quoted = false
    var empty = true
    for byte in bytes {
      switch byte {
      case UInt8(ascii: "\""):
        quoted.toggle()
        empty = false
      case UInt8(ascii: "\n") where !quoted, UInt8(ascii: "\r") where !quoted:
        if !empty { rows.append(counts) }
        counts = [:]
        empty = true
      case UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "\t"), UInt8(ascii: "|"):
        if !quoted { counts[byte, default: 0] += 1 }
        empty = false
      default:
        empty = false
      }
    }
    if complete && !empty { rows.append(counts) }
    return rows
  }
}
