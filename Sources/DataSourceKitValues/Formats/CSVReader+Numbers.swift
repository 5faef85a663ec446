import DataSourceKit
import Foundation

// How a field's bytes are read as a number or a boolean, without making a string: what the
// typing of a column, `ReadOptions`' declared types and `double()` of a text all use.

extension CSVReader {
  /// Whether a field is written as an integer: an optional sign, then digits only.
  static func isIntegerSpelling(_ field: UnsafeBufferPointer<UInt8>) -> Bool {
    var i = 0
    if field.count > 0, field[0] == UInt8(ascii: "-") || field[0] == UInt8(ascii: "+") { i = 1 }
    guard i < field.count else { return false }
    while i < field.count {
      guard field[i] &- UInt8(ascii: "0") < 10 else { return false }
      i += 1
    }
    return true
  }

  /// An integer without leading zeros (`007` stays text, as an ID or a postcode would want).
  static func parseInt(_ field: UnsafeBufferPointer<UInt8>) -> Int? {
    var i = 0
    var negative = false
    if field.count > 0, field[0] == UInt8(ascii: "-") || field[0] == UInt8(ascii: "+") {
      negative = field[0] == UInt8(ascii: "-")
      i = 1
    }
    let digits = field.count - i
    guard digits > 0, digits <= 19 else { return nil }
    if digits > 1, field[i] == UInt8(ascii: "0") { return nil }
    // Accumulated negative: Int.min (-9223372036854775808) has no positive counterpart.
    var value = 0
    while i < field.count {
      let d = field[i] &- UInt8(ascii: "0")
      guard d < 10 else { return nil }
      let (m, o1) = value.multipliedReportingOverflow(by: 10)
      let (a, o2) = m.subtractingReportingOverflow(Int(d))
      guard !o1, !o2 else { return nil }
      value = a
      i += 1
    }
    if negative { return value }
    return value == Int.min ? nil : -value
  }

  private static let exactPowers: [Double] = (0...22).map { pow(10.0, Double($0)) }

  /// A decimal number: digits with an optional point and exponent.
  static func parseDouble(_ field: UnsafeBufferPointer<UInt8>) -> Double? {
    var i = 0
    let n = field.count
    var negative = false
    if i < n, field[i] == UInt8(ascii: "-") || field[i] == UInt8(ascii: "+") {
      negative = field[i] == UInt8(ascii: "-")
      i += 1
    }
    var mantissa: UInt64 = 0
    var significant = 0
    var fractionDigits = 0
    var digits = 0
    while i < n, field[i] &- UInt8(ascii: "0") < 10 {
      if significant < 19 {
        mantissa = mantissa &* 10 &+ UInt64(field[i] &- UInt8(ascii: "0"))
        if mantissa > 0 { significant += 1 }
      } else {
        significant += 1
      }
      digits += 1
      i += 1
    }
    if i < n, field[i] == UInt8(ascii: ".") {
      i += 1
      while i < n, field[i] &- UInt8(ascii: "0") < 10 {
        if significant < 19 {
          mantissa = mantissa &* 10 &+ UInt64(field[i] &- UInt8(ascii: "0"))
          if mantissa > 0 { significant += 1 }
          fractionDigits += 1
        }
        digits += 1
        i += 1
      }
    }
    guard digits > 0 else { return parseNonFinite(field) }
    var hasExponent = false
    if i < n, field[i] == UInt8(ascii: "e") || field[i] == UInt8(ascii: "E") {
      hasExponent = true
      i += 1
      if i < n, field[i] == UInt8(ascii: "-") || field[i] == UInt8(ascii: "+") { i += 1 }
      let exponentStart = i
      while i < n, field[i] &- UInt8(ascii: "0") < 10 { i += 1 }
      guard i > exponentStart else { return nil }
    }
    guard i == n else { return nil }
    // Clinger's fast path: exact when the mantissa and the power of ten are both exact.
    if !hasExponent, significant <= 15, fractionDigits <= 22 {
      let value = Double(mantissa) / exactPowers[fractionDigits]
      return negative ? -value : value
    }
    return Double(String(decoding: field, as: UTF8.self))
  }

  /// NaN and the infinities as DuckDB reads them into a DOUBLE: `nan`, `inf` or `infinity` in
  /// any case, with a sign or none; `nil` for anything else (a number too large for a double is
  /// not one: it reads as infinity from ``parseDouble(_:)`` and stays text).
  static func parseNonFinite(_ field: UnsafeBufferPointer<UInt8>) -> Double? {
    var start = 0
    var negative = false
    if let first = field.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
      negative = first == UInt8(ascii: "-")
      start = 1
    }
    let word = UnsafeBufferPointer(rebasing: field[start...])
    func equals(_ spelled: StaticString) -> Bool {
      guard word.count == spelled.utf8CodeUnitCount else { return false }
      let w = spelled.utf8Start
      for k in 0..<word.count where word[k] | 0x20 != w[k] { return false }
      return true
    }
    if equals("nan") { return .nan }
    if equals("inf") || equals("infinity") { return negative ? -.infinity : .infinity }
    return nil
  }

  static func parseBool(_ field: UnsafeBufferPointer<UInt8>) -> Bool? {
    func equals(_ word: StaticString) -> Bool {
      guard field.count == word.utf8CodeUnitCount else { return false }
      let w = word.utf8Start
      for k in 0..<field.count where field[k] | 0x20 != w[k] { return false }
      return true
    }
    if equals("true") { return true }
    if equals("false") { return false }
    return nil
  }
}

/// Where a chunk's fields are: a start (from the chunk's first byte) and a length a field, a
/// buffer of each a column, reused from chunk to chunk.
///
/// The buffers come from `malloc` and are sized for the most rows a chunk can have; only the
/// rows written touch memory.
///
/// `@unchecked Sendable`: concurrent scans write disjoint rows, and the buffers are read only
/// after the scans are done.
final class ChunkFields: @unchecked Sendable {
  let width: Int
  private(set) var capacity = 0
  private(set) var starts: [UnsafeMutablePointer<UInt32>] = []
  private(set) var lengths: [UnsafeMutablePointer<UInt32>] = []

  init(width: Int) { self.width = width }

  deinit {
    for c in 0..<starts.count {
      free(starts[c])
      free(lengths[c])
    }
  }

  /// Makes room for `rows` rows (what the buffers held before may be lost).
  func reserve(rows: Int) {
    guard rows > capacity else { return }
    capacity = max(rows, capacity * 2)
    func allocate(_ old: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<UInt32> {
      free(old)
      guard let memory = malloc(capacity * MemoryLayout<UInt32>.stride) else { fatalError("out of memory") }
      return memory.bindMemory(to: UInt32.self, capacity: capacity)
    }
    starts = (0..<width).map { allocate(starts.isEmpty ? nil : starts[$0]) }
    lengths = (0..<width).map { allocate(lengths.isEmpty ? nil : lengths[$0]) }
  }

  /// Moves `count` rows from row `source` down to row `target`.
  func moveRows(from source: Int, count: Int, to target: Int) {
    guard source != target, count > 0 else { return }
    for c in 0..<width {
      (starts[c] + target).update(from: starts[c] + source, count: count)
      (lengths[c] + target).update(from: lengths[c] + source, count: count)
    }
  }
}

/// Where in a file a buffer of it starts, for errors: the file's name and the line of the
/// buffer's first byte.
struct FilePlace: Sendable {
  let path: String
  let firstLine: Int

  /// The 1-based line of the byte at `offset` in the buffer.
  func line(of offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
    firstLine + FileBytes.line(of: offset, in: bytes) - 1
  }
}
