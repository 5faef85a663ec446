import DataSourceKitValues

// PostgreSQL's statements are `BoundSQL`, the type SQLite's are written in too: a literal is a
// parameter (`$1`, `$2`, …) bound when the statement runs, so no value from the data or the
// user is ever spliced into the text the server parses. The server reads every parameter as
// text, by the cast written after it (`$1::int8`); this file is how a value becomes that text.

extension BoundSQL {
  /// A parameter holding `text` as the server reads it (null for `nil`).
  static func serverText(_ text: String?) -> BoundSQL { .bound(text.map(Value.string) ?? .null) }

  /// The text to send, with `$1`, `$2`, … in order, and the values they stand for, as the text
  /// the server reads them from (`nil`: SQL's null).
  var statement: (text: String, parameters: [String?]) {
    (text { _, number in "$\(number)" }, values.map(Self.serverText))
  }

  /// The parameters as `describe` lists them: `$1 = '500.0', $2 = NULL`.
  var parameterList: String {
    statement.parameters.enumerated().map { index, value in
      "$\(index + 1) = " + (value.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" } ?? "NULL")
    }
    .joined(separator: ", ")
  }

  /// A value as the server reads it from text, or `nil` for null.
  private static func serverText(_ value: Value) -> String? {
    switch value {
    case .null: nil
    case .double(let d): d.isNaN ? "NaN" : d.isInfinite ? (d > 0 ? "Infinity" : "-Infinity") : "\(d)"
    case .string(let s): s
    default: value.description
    }
  }
}
