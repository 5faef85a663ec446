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
}
