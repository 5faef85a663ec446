import DataSourceKit
import DataSourceKitValues
import Testing

@testable import DataSourceScript

/// What a load's note says to do with the texts that kept a column from its type.
@Suite("Marker advice")
struct MarkerAdviceTests {
  static func advice(_ texts: [String], _ type: ValueType, fields: [String] = ["c"]) -> String {
    let markers = texts.map { Marker(text: $0, count: 1, wouldBe: type) }
    return SessionNotes.advice(
      for: markers, fields: fields, kind: type.isNumber ? "numbers" : "\(type.rawValue)s")
  }

  @Test("a missing-value marker is read as null; nothing else is")
  func missing() {
    #expect(Self.advice(["NA", "n/a", "-"], .int) == #"add null "NA", "n/a", "-" to read it as numbers"#)
    #expect(
      Self.advice(["oops"], .double)
        == #""oops" is not a number: correct it at the source (a null marker would drop it)"#)
  }

  @Test(
    "a date or timestamp written without leading zeros gets its type with the format; a field name is quoted when it must be"
  )
  func formats() {
    #expect(Self.advice(["2013-1-5"], .date) == #"types {c: date "%Y-%m-%d"} reads "2013-1-5""#)
    #expect(
      Self.advice(["2013-1-5 7:04:05"], .timestamp, fields: ["opened at"])
        == #"types {"opened at": timestamp "%Y-%m-%d %H:%M:%S"} reads "2013-1-5 7:04:05""#)
    #expect(
      Self.advice(["?", "2013-13-45"], .date)
        == #"add null "?" for the missing values; "2013-13-45" is not a date: correct it at the source (a null marker would drop it)"#
    )
  }
}
