/// SQL whose values travel apart from its text: a literal is a parameter (`$1`, `$2`, …) bound
/// when the statement runs, so no value from the data or the user is ever spliced into the
/// text the server parses.
///
/// A statement is built from pieces: interpolating a `PostgresSQL` appends its pieces (and its
/// parameters, renumbered where they land), interpolating a `String` appends trusted text (a
/// keyword, a quoted identifier, a query the user typed as the source), and ``bind(_:)`` appends
/// a parameter. The numbers are given when the statement is rendered, so fragments compose in
/// any order.
struct PostgresSQL: Sendable, Equatable, Hashable, ExpressibleByStringInterpolation {
  enum Piece: Sendable, Equatable, Hashable {
    case text(String)
    /// A value, as its text (the server reads it by the cast written after it), or SQL's null.
    case parameter(String?)
  }

  private(set) var pieces: [Piece]

  init(stringLiteral value: String) { pieces = [.text(value)] }

  init(stringInterpolation: StringInterpolation) { pieces = stringInterpolation.pieces }

  private init(pieces: [Piece]) { self.pieces = pieces }

  /// A parameter holding `value`.
  static func bind(_ value: String?) -> PostgresSQL { PostgresSQL(pieces: [.parameter(value)]) }

  /// Whether there is nothing in it.
  var isEmpty: Bool { pieces.allSatisfy { $0 == .text("") } }

  static func + (a: PostgresSQL, b: PostgresSQL) -> PostgresSQL { PostgresSQL(pieces: a.pieces + b.pieces) }

  static func += (a: inout PostgresSQL, b: PostgresSQL) { a.pieces += b.pieces }

  /// The text to send, with `$1`, `$2`, … in order, and the values they stand for.
  var statement: (text: String, parameters: [String?]) {
    var text = ""
    var parameters: [String?] = []
    for piece in pieces {
      switch piece {
      case .text(let part): text += part
      case .parameter(let value):
        parameters.append(value)
        text += "$\(parameters.count)"
      }
    }
    return (text, parameters)
  }

  /// The parameters as `describe` lists them: `$1 = '500.0', $2 = NULL`.
  var parameterList: String {
    statement.parameters.enumerated().map { index, value in
      "$\(index + 1) = " + (value.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" } ?? "NULL")
    }
    .joined(separator: ", ")
  }

  struct StringInterpolation: StringInterpolationProtocol {
    fileprivate(set) var pieces: [Piece] = []

    init(literalCapacity: Int, interpolationCount: Int) {}

    mutating func appendLiteral(_ literal: String) { pieces.append(.text(literal)) }

    mutating func appendInterpolation(_ sql: PostgresSQL) { pieces += sql.pieces }

    /// Trusted text: keywords, quoted identifiers, numbers dsh made, the user's own query.
    mutating func appendInterpolation(_ text: String) { pieces.append(.text(text)) }

    mutating func appendInterpolation(_ number: Int) { pieces.append(.text(String(number))) }
  }
}

extension Sequence where Element == PostgresSQL {
  /// The fragments one after another, `separator` between them.
  func joined(separator: String) -> PostgresSQL {
    var result: PostgresSQL = ""
    for (index, part) in enumerated() {
      if index > 0 { result += PostgresSQL(stringLiteral: separator) }
      result += part
    }
    return result
  }
}
