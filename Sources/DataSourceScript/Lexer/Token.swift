/// A token and the bytes of source it came from.
public struct Token: Equatable, Sendable {
  public var kind: TokenKind
  public var range: SourceRange
}

public enum TokenKind: Equatable, Sendable {
  case identifier(String)
  /// A name in backquotes (`` `unit price` ``): always a field, whatever it is spelled like.
  case quotedName(String)
  /// A string literal, escapes already decoded.
  case string(String)
  case int(Int)
  case double(Double)
  case symbol(Symbol)
  /// The end of a statement: a line end outside brackets (not after `|` or `,`), or `;`.
  case endOfStatement
  case endOfInput
  /// Text that starts no token; the statement holding it fails with this diagnostic.
  case invalid(Diagnostic)

  /// Whether a source may start here: a name, or a source in parentheses.
  var startsSource: Bool {
    switch self {
    case .identifier, .quotedName, .symbol(.openParen): true
    default: false
    }
  }

  /// How an error message names the token.
  public var description: String {
    switch self {
    case .identifier(let name): "'\(name)'"
    case .quotedName(let name): "'`\(name)`'"
    case .string: "a string"
    case .int(let i): "'\(i)'"
    case .double(let d): "'\(d)'"
    case .symbol(let s): "'\(s.rawValue)'"
    case .endOfStatement: "end of line"
    case .endOfInput: "end of input"
    case .invalid: "invalid text"
    }
  }
}

public enum Symbol: String, Sendable, CaseIterable {
  case equals = "="
  case equalEqual = "=="
  case notEqual = "!="
  case less = "<"
  case lessEqual = "<="
  case greater = ">"
  case greaterEqual = ">="
  case openParen = "("
  case closeParen = ")"
  case openBracket = "["
  case closeBracket = "]"
  case openBrace = "{"
  case closeBrace = "}"
  case comma = ","
  case colon = ":"
  case pipe = "|"
  case dotDot = ".."
  case dot = "."
  case plus = "+"
  case minus = "-"
  case star = "*"
  case slash = "/"
  case percent = "%"

  /// The symbol a byte writes, or the two-byte one (`==`, `..`) it starts with `second`, and its
  /// length in bytes; `nil` for a byte that starts none.
  ///
  /// A switch over bytes: `init(rawValue:)` looks a string up in a table built the first time,
  /// a type lookup in the runtime that every statement's first symbol paid for.
  static func written(_ first: UInt8, then second: UInt8?) -> (symbol: Symbol, length: Int)? {
    if second == UInt8(ascii: "=") {
      switch first {
      case UInt8(ascii: "="): return (.equalEqual, 2)
      case UInt8(ascii: "!"): return (.notEqual, 2)
      case UInt8(ascii: "<"): return (.lessEqual, 2)
      case UInt8(ascii: ">"): return (.greaterEqual, 2)
      default: break
      }
    }
    if first == UInt8(ascii: "."), second == UInt8(ascii: ".") { return (.dotDot, 2) }
    let symbol: Symbol? =
      switch first {
      case UInt8(ascii: "="): .equals
      case UInt8(ascii: "<"): .less
      case UInt8(ascii: ">"): .greater
      case UInt8(ascii: "("): .openParen
      case UInt8(ascii: ")"): .closeParen
      case UInt8(ascii: "["): .openBracket
      case UInt8(ascii: "]"): .closeBracket
      case UInt8(ascii: "{"): .openBrace
      case UInt8(ascii: "}"): .closeBrace
      case UInt8(ascii: ","): .comma
      case UInt8(ascii: ":"): .colon
      case UInt8(ascii: "|"): .pipe
      case UInt8(ascii: "."): .dot
      case UInt8(ascii: "+"): .plus
      case UInt8(ascii: "-"): .minus
      case UInt8(ascii: "*"): .star
      case UInt8(ascii: "/"): .slash
      case UInt8(ascii: "%"): .percent
      default: nil
      }
    return symbol.map { ($0, 1) }
  }
}
