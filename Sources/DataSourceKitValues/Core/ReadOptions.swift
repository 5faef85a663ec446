import DataSourceKit

/// How a source's values are read: which texts mean "missing", and which fields have a type
/// given rather than inferred (`null "NA", "N/A"` and `types {zip: text, day: date "%b %d %Y"}`).
///
/// The same options mean the same on every source: a CSV, a JSON file, a web API and a SQLite
/// table read with them give the same values.
public struct ReadOptions: Sendable, Equatable {
  /// Texts read as null, compared exactly (`"NA"` is not `"na"`).
  public var nullMarkers: [String]
  /// Fields whose type is given, with a strptime-style format for dates and timestamps.
  public var types: [String: DeclaredType]

  /// Options with these null markers and declared field types.
  public init(nullMarkers: [String] = [], types: [String: DeclaredType] = [:]) {
    self.nullMarkers = nullMarkers
    self.types = types
  }

  /// Whether no option is set.
  public var isEmpty: Bool { nullMarkers.isEmpty && types.isEmpty }

  /// Whether `text` is one of the null markers.
  public func isNullMarker(_ text: String) -> Bool { nullMarkers.contains(text) }
}

/// A type given to a field, as `types {…}` writes it.
public struct DeclaredType: Sendable, Equatable {
  /// The type every value of the field must have.
  public var type: ValueType
  /// For dates and timestamps: how the text is written (`"%b %d %Y"`); ISO 8601 when `nil`.
  public var format: String?

  /// A declared `type`, with the `format` its dates are written in (a strftime pattern), if any.
  public init(_ type: ValueType, format: String? = nil) {
    self.type = type
    self.format = format
  }

  /// The types a field can be given.
  public static let allowed: [ValueType] = [.bool, .int, .double, .text, .date, .timestamp]

  /// A description for people.
  public var description: String {
    type.rawValue + (format.map { " " + JSONWriter.quoted($0) } ?? "")
  }

  /// The value of `text` as this type, or `nil` when it does not fit.
  ///
  /// Numbers are read as a CSV
  /// reads them (an int has no leading zeros; `1e400` is no double).
  public func read(_ text: String) -> Value? {
    var bytes = Array(text.utf8)
    return bytes.withUnsafeMutableBufferPointer { mutable in
      let field = UnsafeBufferPointer(mutable)
      switch type {
      case .text: return .string(text)
      case .int: return CSVReader.parseInt(field).map(Value.int)
      case .double:
        guard let d = CSVReader.parseDouble(field), d.isFinite || CSVReader.parseNonFinite(field) != nil
        else {
          return nil
        }
        return .double(d)
      case .bool: return CSVReader.parseBool(field).map(Value.bool)
      case .date:
        if let format {
          return CalendarDate.parse(text, format: format).map {
            .date(CalendarDate.split(microseconds: $0).days)
          }
        }
        return CalendarDate.parseISODate(field).map(Value.date)
      case .timestamp:
        if let format { return CalendarDate.parse(text, format: format).map(Value.timestamp) }
        return CalendarDate.parseISOTimestamp(field).map(Value.timestamp)
          ?? CalendarDate.parseISODate(field).map { .timestamp($0 * CalendarDate.microsecondsPerDay) }
      default: return nil
      }
    }
  }

  /// A value already typed (from JSON or a database) converted to this type, or `nil`.
  public func convert(_ value: Value) -> Value? {
    switch (type, value) {
    case (_, .null): return .null
    case (_, .string(let s)): return read(s)
    case (.text, _): return .string(value.description)
    case (.int, .int), (.double, .double), (.bool, .bool), (.date, .date), (.timestamp, .timestamp):
      return value
    case (.double, .int(let i)): return .double(Double(i))
    case (.int, .double(let d)):
      guard let i = Int(exactly: d) else { return nil }
      return .int(i)
    case (.timestamp, .date(let days)): return .timestamp(days * CalendarDate.microsecondsPerDay)
    case (.bool, .int(let i)) where i == 0 || i == 1: return .bool(i == 1)
    default: return nil
    }
  }
}

extension ReadOptions {
  /// Items (records) with the options applied.
  ///
  /// Marker texts are made null and declared fields converted. A value that does not fit is an error naming the item (`item 3`, from 1).
  ///
  /// - Complexity: O(items × fields).
  public func applied(to items: [Value], path: String) throws -> [Value] {
    if isEmpty { return items }
    var result = items
    for index in result.indices {
      guard case .record(let record) = result[index] else { continue }
      var values = record.values
      var changed = false
      for (position, name) in record.schema.names.enumerated() {
        var value = values[position]
        if case .string(let text) = value, isNullMarker(text) {
          value = .null
        } else if let declared = types[name] {
          guard let converted = declared.convert(value) else {
            throw DataSourceError.valueNotOfType(
              path: path, place: "item \(index + 1)", field: name,
              value: value.description, type: declared.description)
          }
          value = converted
        }
        if value != values[position] || value.type != values[position].type {
          values[position] = value
          changed = true
        }
      }
      if changed { result[index] = .record(Record(schema: record.schema, values: values)) }
    }
    // An empty list (a last page, an empty file) has no fields to check the names against.
    if !result.isEmpty, let fields = try FieldProfiler.profiles(of: result)?.map(\.name) {
      for name in types.keys where !fields.contains(name) {
        throw DataSourceError.unknownTypedField(path: path, field: name, fields: fields)
      }
    }
    return result
  }
}

/// How a CSV file is written: the byte between its fields, whether its first row names the
/// columns, and how many lines come before that row (a title, a notice).
public struct CSVDialect: Sendable, Equatable {
  /// The byte between fields.
  public var delimiter: UInt8
  /// Whether the first row (after the lines skipped) names the columns; without one they are
  /// named `column0`, `column1`, … as DuckDB names them.
  public var hasHeader: Bool
  /// Lines passed over at the start, before the header (or the first row), whatever they hold.
  public var skippedLines: Int
  /// Whether the delimiter was not given, so the file's first lines choose it: `;`, a tab or
  /// `|` when the header holds no comma and each row after it as many of that byte as the
  /// header (see ``found(in:)``); else ``delimiter``.
  public var findsDelimiter: Bool

  /// A dialect: commas, a header, nothing skipped unless given.
  public init(
    delimiter: UInt8 = UInt8(ascii: ","), hasHeader: Bool = true, skippedLines: Int = 0,
    findsDelimiter: Bool = false
  ) {
    self.delimiter = delimiter
    self.hasHeader = hasHeader
    self.skippedLines = skippedLines
    self.findsDelimiter = findsDelimiter
  }
}
