import Foundation
import Testing

@testable import DataSourceKit
@testable import DataSourceKitFiles
@testable import DataSourceKitValues

@Suite("Types: dates, inference, exact numbers")
struct TypesTests {
  @Test("day numbers and calendar dates convert both ways; invalid days are refused")
  func calendar() {
    for days in stride(from: -700_000, through: 2_900_000, by: 997) {
      let (y, m, d) = CalendarDate.civil(days: days)
      #expect(CalendarDate.days(year: y, month: m, day: d) == days)
    }
    #expect(CalendarDate.days(year: 1970, month: 1, day: 1) == 0)
    #expect(CalendarDate.days(year: 2000, month: 2, day: 29) != nil)
    #expect(CalendarDate.days(year: 1900, month: 2, day: 29) == nil)
    #expect(CalendarDate.days(year: 2023, month: 4, day: 31) == nil)
    // 2026-11-23 is a Monday, 1970-01-01 a Thursday.
    #expect(CalendarDate.weekday(days: CalendarDate.days(year: 2026, month: 11, day: 23)!) == 1)
    #expect(CalendarDate.weekday(days: 0) == 4)
    // The years dsh reads, and no day past them.
    #expect(CalendarDate.dayRange.lowerBound == CalendarDate.days(year: 1, month: 1, day: 1))
    #expect(CalendarDate.dayRange.upperBound == CalendarDate.days(year: 9999, month: 12, day: 31))
    #expect(CalendarDate.isoText(days: -1) == "1969-12-31")
    #expect(CalendarDate.isoText(microseconds: -1) == "1969-12-31T23:59:59.999999Z")
  }

  @Test(
    "ISO 8601 timestamps: T or space, seconds and fraction optional, an offset applied",
    arguments: [
      ("2020-01-01T10:00:00Z", "2020-01-01T10:00:00Z"),
      ("2020-01-01 10:00", "2020-01-01T10:00:00Z"),
      ("2020-01-01T10:00:00+02:00", "2020-01-01T08:00:00Z"),
      ("2020-01-01T00:30:00-0130", "2020-01-01T02:00:00Z"),
      ("2020-01-01T10:00:00.25Z", "2020-01-01T10:00:00.25Z"),
    ])
  func isoTimestamps(text: String, expected: String) {
    let micros = CalendarDate.parseISOTimestamp(Array(text.utf8))
    #expect(micros.map(CalendarDate.isoText(microseconds:)) == expected)
  }

  @Test("not timestamps: a bad hour, a missing time, a 30th of February")
  func notTimestamps() {
    for text in ["2020-01-01T24:00", "2020-01-01", "2020-02-30 10:00", "2020-01-01T10:00 junk"] {
      #expect(CalendarDate.parseISOTimestamp(Array(text.utf8)) == nil, "\(text)")
    }
  }

  @Test(
    "strptime formats, as DuckDB's",
    arguments: [
      ("Jan 1 2000", "%b %d %Y", "2000-01-01T00:00:00Z"),
      ("2012/01/31", "%Y/%m/%d", "2012-01-31T00:00:00Z"),
      ("30.04.92 5:07 PM", "%d.%m.%y %I:%M %p", "1992-04-30T17:07:00Z"),
      ("Monday, 23 November 2026", "%A, %d %B %Y", "2026-11-23T00:00:00Z"),
      ("2026-327", "%Y-%j", "2026-11-23T00:00:00Z"),
      ("2020-01-01 10:00 +0100", "%Y-%m-%d %H:%M %z", "2020-01-01T09:00:00Z"),
    ])
  func strptime(text: String, format: String, expected: String) {
    #expect(CalendarDate.parse(text, format: format).map(CalendarDate.isoText(microseconds:)) == expected)
  }

  @Test("a text that does not fit its format reads as nothing")
  func strptimeRefuses() {
    #expect(CalendarDate.parse("Jan 32 2000", format: "%b %d %Y") == nil)
    #expect(CalendarDate.parse("2000-01-01x", format: "%Y-%m-%d") == nil)
    #expect(CalendarDate.parse("Foo 1 2000", format: "%b %d %Y") == nil)
  }

  @Test("strftime writes dates in English and UTC")
  func strftime() {
    let day = CalendarDate.days(year: 1992, month: 4, day: 30)!
    #expect(
      CalendarDate.format(day, isTimestamp: false, format: "%a %d %b %Y, day %j")
        == "Thu 30 Apr 1992, day 121")
    #expect(
      CalendarDate.format(
        day * CalendarDate.microsecondsPerDay + 3_723_000_000, isTimestamp: true, format: "%H:%M:%S %p")
        == "01:02:03 AM")
  }

  @Test("ints and doubles compare exactly, beyond 2^53 too")
  func exactNumbers() {
    let big = 1 << 53
    #expect(Value.compare(.int(big + 1), .double(Double(big))) == .orderedDescending)
    #expect(Value.compare(.double(Double(big)), .int(big + 1)) == .orderedAscending)
    #expect(Value.int(big + 1) != .double(Double(big)))
    #expect(Value.int(3) == .double(3))
    #expect(Value.compare(.int(Int.max), .double(9.3e18)) == .orderedAscending)
    #expect(Value.compare(.int(-3), .double(-2.5)) == .orderedAscending)
    #expect(Value.compare(.int(2), .double(.nan)) == .orderedAscending)
  }

  @Test("text compares by code point, as SQLite's BINARY collation: no normalization")
  func textOrder() {
    #expect(Value.compare(.string("Z"), .string("a")) == .orderedAscending)
    #expect(Value.string("e\u{301}") != .string("\u{E9}"))
    #expect(Value.compare(.string("\u{E9}"), .string("f")) == .orderedDescending)
  }

  @Test("arithmetic: ints stay ints but /, overflow and division by zero give null and a note")
  func arithmetic() {
    let notes = ExpressionNotes()
    func run(_ e: RowExpression) -> Value { e.compiled(notes: notes)(.null) }
    #expect(run(.binary(.literal(.int(7)), .divide, .literal(.int(2)))) == .double(3.5))
    #expect(run(.binary(.literal(.int(7)), .remainder, .literal(.int(-2)))) == .int(1))
    #expect(run(.binary(.literal(.int(Int.max)), .add, .literal(.int(1)))) == .null)
    #expect(run(.binary(.literal(.int(1)), .divide, .literal(.int(0)))) == .null)
    #expect(run(.binary(.literal(.double(1)), .remainder, .literal(.int(0)))) == .null)
    #expect(run(.binary(.literal(.string("a")), .add, .literal(.string("b")))) == .string("ab"))
    let taken = notes.take()
    #expect(taken.map(\.note) == [.overflow, .divisionByZero])
    #expect(taken.map(\.count) == [1, 2])
  }

  func csv(_ text: String, options: ReadOptions = ReadOptions()) async throws -> CSVProvider {
    let path = NSTemporaryDirectory() + "types-\(UUID().uuidString).csv"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let provider = CSVProvider(path: path, displayPath: "t.csv", options: options)
    try await provider.load()
    return provider
  }

  @Test("inference: dates, timestamps, zip codes, quoted empty text, and the markers that keep numbers text")
  func inference() async throws {
    let provider = try await csv(
      "day,when,zip,note,mass,stray\n2020-01-01,2020-01-01 10:00,02134,\"\",NA,1\n2021-02-03,2021-02-03T04:05:06Z,10001,,3750,2\n,,,x,4000,n/a\n"
    )
    let profiles = provider.fieldProfiles ?? []
    #expect(profiles.map(\.type) == [.date, .timestamp, .text, .text, .text, .text])
    #expect(profiles[4].markers == [Marker(text: "NA", count: 1, wouldBe: .int)])
    #expect(profiles[5].markers == [Marker(text: "n/a", count: 1, wouldBe: .int)])
    #expect(profiles.map(\.nulls) == [1, 1, 1, 1, 0, 0])
    let first = provider.item(at: ItemPath(item: 0, section: 0))
    #expect(first.value(atPath: ["day"]) == .date(CalendarDate.days(year: 2020, month: 1, day: 1)!))
    #expect(first.value(atPath: ["note"]) == .string(""))
    #expect(first.value(atPath: ["zip"]) == .string("02134"))
  }

  @Test("spaces around a number do not make it text; a text column keeps them")
  func spaces() async throws {
    let provider = try await csv(
      "n,x,s\n1, .5,a \n 2 ,3.25 ,NA \n3,  ,b\n", options: ReadOptions(nullMarkers: ["NA"]))
    #expect(provider.fieldProfiles?.map(\.type) == [.int, .double, .text])
    #expect(provider.fieldProfiles?.map(\.nulls) == [0, 1, 1])
    #expect(
      provider.item(at: ItemPath(item: 0, section: 0))
        == .record(Record([("n", .int(1)), ("x", .double(0.5)), ("s", .string("a "))])))
  }

  @Test("null and types: markers read as null, declared types read with their formats")
  func options() async throws {
    let provider = try await csv(
      "day,mass,zip\nJan 3 2000,NA,02134\nApr 3 2000,3750,10001\n",
      options: ReadOptions(nullMarkers: ["NA"], types: ["day": DeclaredType(.date, format: "%b %d %Y")]))
    #expect(provider.fieldProfiles?.map(\.type) == [.date, .int, .text])
    #expect(provider.fieldProfiles?.map(\.nulls) == [0, 1, 0])
    #expect(
      provider.item(at: ItemPath(item: 1, section: 0)).value(atPath: ["day"])
        == .date(CalendarDate.days(year: 2000, month: 4, day: 3)!))
  }

  @Test("options on values: markers made null, declared fields converted; an empty list has nothing to check")
  func optionsOnValues() throws {
    let options = ReadOptions(
      nullMarkers: ["NA"], types: ["day": DeclaredType(.date), "n": DeclaredType(.double)])
    let items: [Value] = [
      .record(Record([("day", .string("2020-01-02")), ("n", .int(3)), ("s", .string("NA"))]))
    ]
    #expect(
      try options.applied(to: items, path: "x")
        == [.record(Record([("day", .date(18263)), ("n", .double(3)), ("s", .null)]))])
    #expect(try options.applied(to: [], path: "x") == [])
    #expect(throws: DataSourceError.unknownTypedField(path: "x", field: "day", fields: ["n"])) {
      try options.applied(to: [.record(Record([("n", .int(1))]))], path: "x")
    }
  }

  @Test("a value that does not fit its declared type is an error naming file, line, field and value")
  func declaredTypeError() async {
    await #expect(
      throws: DataSourceError.valueNotOfType(
        path: "t.csv", place: "3", field: "mass", value: "heavy", type: "int")
    ) {
      _ = try await self.csv(
        "id,mass\n1,3750\n2,heavy\n", options: ReadOptions(types: ["mass": DeclaredType(.int)]))
    }
    await #expect(
      throws: DataSourceError.unknownTypedField(path: "t.csv", field: "masss", fields: ["id", "mass"])
    ) {
      _ = try await self.csv("id,mass\n1,3750\n", options: ReadOptions(types: ["masss": DeclaredType(.int)]))
    }
  }

  @Test("every NaN is one value: equal, hashed alike, one section key")
  func nanIsOneValue() {
    let quiet = Double.nan
    let other = Double(nan: 7, signaling: false)
    #expect(quiet.bitPattern != other.bitPattern)
    #expect(Value.double(quiet) == Value.double(other))
    #expect(Value.double(quiet).hashValue == Value.double(other).hashValue)
    #expect(SectionKey(selfOrdering: Value.double(quiet)) == SectionKey(selfOrdering: Value.double(other)))
    #expect(Set([Value.double(quiet), Value.double(other)]).count == 1)
    // Keys of the app's own types keep AnyHashable's equality: 1 and 1.0 are one key.
    #expect(SectionKey(1) == SectionKey(1.0) && SectionKey(1).hashValue == SectionKey(1.0).hashValue)
  }
}
