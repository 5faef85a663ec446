import DataSourceKit
import Foundation

/// Parses JSON into ``Value``s, keeping the order of object fields (Foundation's parser does
/// not), and reports errors with line and column.
package struct JSONReader {
  package struct Failure: Error {
    var offset: Int
    package var message: String
    /// Whether the input ended inside a value (a line of JSON Lines cut short, say).
    var endedInsideValue = false
  }

  let bytes: UnsafeBufferPointer<UInt8>
  var i = 0
  var depth = 0
  /// Deeper nesting is refused rather than risking the stack.
  static let maximumDepth = 512

  init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

  /// Every top-level value: one for a JSON document, one per line for JSON Lines.
  ///
  /// A file whose first line is a whole value with more after it is JSON Lines: each line is
  /// then parsed on its own, so a value cut short is reported on its own line, not where the
  /// parser gave up lines later.
  package static func parseAll(_ bytes: UnsafeBufferPointer<UInt8>) throws -> [Value] {
    var start = 0
    if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { start = 3 }
    let firstLineEnd = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
    if firstLineEnd < bytes.count, let first = try? values(in: bytes, from: start, to: firstLineEnd),
      !first.isEmpty
    {
      var all = first
      var lineStart = firstLineEnd + 1
      while lineStart < bytes.count {
        let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
        do {
          all += try values(in: bytes, from: lineStart, to: lineEnd)
        } catch var failure as Failure where failure.endedInsideValue {
          failure.message = "the line ends inside a value (JSON Lines holds one whole value a line)"
          throw failure
        }
        lineStart = lineEnd + 1
      }
      return all
    }
    return try values(in: bytes, from: start, to: bytes.count)
  }

  /// The values in `bytes[start..<end]`; a failure's offset is in `bytes`.
  private static func values(in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) throws
    -> [Value]
  {
    var start = start
    // A byte order mark at a line's start, where concatenated exports leave one.
    while start + 3 <= end, bytes[start] == 0xEF, bytes[start + 1] == 0xBB, bytes[start + 2] == 0xBF {
      start += 3
    }
    var reader = JSONReader(UnsafeBufferPointer(rebasing: bytes[start..<end]))
    var values: [Value] = []
    do {
      reader.skipWhitespace()
      while reader.i < reader.bytes.count {
        values.append(try reader.parseValue())
        reader.skipWhitespace()
      }
    } catch var failure as Failure {
      failure.offset += start
      throw failure
    }
    return values
  }

  /// Parses one JSON text from a string, for literals given on the command line or in tests.
  static func parse(_ text: String) throws -> Value {
    var copy = text
    return try copy.withUTF8 { buffer in
      let values = try parseAll(buffer)
      guard values.count == 1 else { throw Failure(offset: 0, message: "expected one JSON value") }
      return values[0]
    }
  }

  mutating func skipWhitespace() {
    while i < bytes.count {
      switch bytes[i] {
      case 0x20, 0x0A, 0x0D, 0x09: i += 1
      default: return
      }
    }
  }

  func fail(_ message: String, endedInsideValue: Bool = false) -> Failure {
    Failure(offset: i, message: message, endedInsideValue: endedInsideValue)
  }

  mutating func parseValue() throws -> Value {
    skipWhitespace()
    guard i < bytes.count else { throw fail("unexpected end of input", endedInsideValue: true) }
    switch bytes[i] {
    case UInt8(ascii: "{"): return try parseObject()
    case UInt8(ascii: "["): return try parseArray()
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"): return try parseWord("true", .bool(true))
    case UInt8(ascii: "f"): return try parseWord("false", .bool(false))
    case UInt8(ascii: "n"): return try parseWord("null", .null)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
    default:
      throw fail("unexpected character '\(String(decoding: [bytes[i]], as: UTF8.self))'")
    }
  }

  private mutating func parseWord(_ word: StaticString, _ value: Value) throws -> Value {
    let n = word.utf8CodeUnitCount
    guard i + n <= bytes.count, (0..<n).allSatisfy({ bytes[i + $0] == word.utf8Start[$0] }) else {
      throw fail("invalid literal; expected \(word)")
    }
    i += n
    return value
  }

  mutating func enter() throws {
    depth += 1
    if depth > JSONReader.maximumDepth { throw fail("nested deeper than \(JSONReader.maximumDepth) levels") }
  }

  private mutating func parseObject() throws -> Value {
    try enter()
    defer { depth -= 1 }
    i += 1
    var pairs: [(String, Value)] = []
    skipWhitespace()
    if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
      i += 1
      return .record(Record([]))
    }
    while true {
      skipWhitespace()
      guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
        throw fail("expected a field name in quotes")
      }
      let name = try parseString()
      skipWhitespace()
      guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else {
        throw fail("expected ':' after field name")
      }
      i += 1
      pairs.append((name, try parseValue()))
      skipWhitespace()
      guard i < bytes.count else {
        throw fail("unexpected end of input; expected '}'", endedInsideValue: true)
      }
      if bytes[i] == UInt8(ascii: ",") {
        i += 1
        continue
      }
      if bytes[i] == UInt8(ascii: "}") {
        i += 1
        return .record(Record(pairs))
      }
      throw fail("expected ',' or '}'")
    }
  }

  private mutating func parseArray() throws -> Value {
    try enter()
    defer { depth -= 1 }
    i += 1
    var items: [Value] = []
    skipWhitespace()
    if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
      i += 1
      return .list([])
    }
    while true {
      items.append(try parseValue())
      skipWhitespace()
      guard i < bytes.count else {
        throw fail("unexpected end of input; expected ']'", endedInsideValue: true)
      }
      if bytes[i] == UInt8(ascii: ",") {
        i += 1
        continue
      }
      if bytes[i] == UInt8(ascii: "]") {
        i += 1
        return .list(items)
      }
      throw fail("expected ',' or ']'")
    }
  }

  mutating func parseString() throws -> String {
    i += 1
    var out: [UInt8] = []
    while true {
      guard i < bytes.count else { throw fail("unterminated string") }
      let b = bytes[i]
      if b == UInt8(ascii: "\"") {
        i += 1
        return String(decoding: out, as: UTF8.self)
      }
      if b < 0x20 { throw fail("control character in string; write it as an escape such as \\n") }
      if b != UInt8(ascii: "\\") {
        out.append(b)
        i += 1
        continue
      }
      i += 1
      guard i < bytes.count else { throw fail("unterminated string") }
      let escape = bytes[i]
      i += 1
      switch escape {
      case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
      case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
      case UInt8(ascii: "/"): out.append(UInt8(ascii: "/"))
      case UInt8(ascii: "b"): out.append(0x08)
      case UInt8(ascii: "f"): out.append(0x0C)
      case UInt8(ascii: "n"): out.append(0x0A)
      case UInt8(ascii: "r"): out.append(0x0D)
      case UInt8(ascii: "t"): out.append(0x09)
      case UInt8(ascii: "u"):
        var scalar = try parseHex4()
        if (0xD800..<0xDC00).contains(scalar), i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"),
          bytes[i + 1] == UInt8(ascii: "u")
        {
          i += 2
          let low = try parseHex4()
          scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low &- 0xDC00)
        }
        out.append(contentsOf: Array(String(Unicode.Scalar(scalar).map(Character.init) ?? "\u{FFFD}").utf8))
      default: throw fail("invalid escape '\\\(String(decoding: [escape], as: UTF8.self))'")
      }
    }
  }

  mutating func parseHex4() throws -> UInt32 {
    guard i + 4 <= bytes.count else { throw fail("incomplete \\u escape") }
    var value: UInt32 = 0
    for _ in 0..<4 {
      let b = bytes[i]
      let digit: UInt8
      switch b {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = b - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
      default: throw fail("invalid \\u escape")
      }
      value = value << 4 | UInt32(digit)
      i += 1
    }
    return value
  }

  private mutating func parseNumber() throws -> Value {
    let start = i
    if bytes[i] == UInt8(ascii: "-") { i += 1 }
    var isInteger = true
    while i < bytes.count {
      switch bytes[i] {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): i += 1
      case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"), UInt8(ascii: "-"):
        isInteger = false
        i += 1
      default:
        return try number(from: start, isInteger: isInteger)
      }
    }
    return try number(from: start, isInteger: isInteger)
  }

  private func number(from start: Int, isInteger: Bool) throws -> Value {
    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
    // JSON writes no leading zero (`00012` is not a number there, and would lose its zeros):
    // said, with the way to keep them, as CSV keeps a zip code.
    let digits = text.utf8.drop { $0 == UInt8(ascii: "-") }
    if digits.count > 1, digits.first == UInt8(ascii: "0"), let second = digits.dropFirst().first,
      second >= UInt8(ascii: "0"), second <= UInt8(ascii: "9")
    {
      throw Failure(
        offset: start,
        message: "a JSON number does not start with 0 ('\(text)'); write it as a string, \"\(text)\"")
    }
    if isInteger {
      // Beyond 64 bits a double would keep 16 digits and distinct ids would be equal: the
      // digits are kept, as a string.
      return Int(text).map(Value.int) ?? .string(text)
    }
    guard let double = Double(text) else { throw Failure(offset: start, message: "invalid number '\(text)'") }
    // Beyond a double's range (`1e999`) it would be infinity: kept as written, as CSV keeps it.
    return double.isFinite ? .double(double) : .string(text)
  }
}

extension JSONReader.Failure {
  /// Line and column (both from 1, column in characters) of the failure in `bytes`.
  package func location(in bytes: UnsafeBufferPointer<UInt8>) -> (line: Int, column: Int) {
    var line = 1
    var lineStart = 0
    for k in 0..<min(offset, bytes.count) where bytes[k] == UInt8(ascii: "\n") {
      line += 1
      lineStart = k + 1
    }
    let prefix = UnsafeBufferPointer(rebasing: bytes[lineStart..<min(offset, bytes.count)])
    return (line, String(decoding: prefix, as: UTF8.self).count + 1)
  }
}
