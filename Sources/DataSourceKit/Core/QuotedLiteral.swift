/// Text inside a quoted string literal, escaped for the reader that will read it back.
///
/// Every writer of a literal dsh makes goes through this one loop: JSON (values and output),
/// Swift (the programs `as swift` writes) and dsh's own scripts (`save`). They agree on quotes,
/// backslashes and line ends; they differ in which other scalars each hides behind an escape, and
/// in how it spells one.
package enum QuotedLiteral {
  /// JSON: `\uXXXX` for C0 controls, DEL and C1 controls.
  case json
  /// Swift source: `\u{…}` for controls, line and paragraph separators, bidirectional controls
  /// and the byte order mark, none of which may change how the program reads (or ends a comment).
  case swift
  /// A dsh script: `\u{…}` for C0 controls and DEL.
  case dsh

  /// `text` between double quotes.
  package func quoted(_ text: String) -> String {
    var out = ""
    append(text, to: &out)
    return out
  }

  /// `text` between double quotes, added to `out`.
  package func append(_ text: String, to out: inout String) {
    out += "\""
    appendEscaped(text, to: &out)
    out += "\""
  }

  /// `text` escaped, without the quotes.
  package func appendEscaped(_ text: String, to out: inout String) {
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\t": out += "\\t"
      case "\r" where self != .dsh: out += "\\r"
      case _ where hides(scalar): out += escape(scalar.value)
      default: out.unicodeScalars.append(scalar)
      }
    }
  }

  /// Whether the scalar is written as an escape.
  package func hides(_ scalar: Unicode.Scalar) -> Bool {
    switch self {
    case .json: scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    case .dsh: scalar.value < 0x20 || scalar.value == 0x7F
    case .swift:
      switch scalar.value {
      case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF:
        true
      default: false
      }
    }
  }

  /// The escape of a scalar, as this reader spells one.
  package func escape(_ value: UInt32) -> String {
    let hex = String(value, radix: 16)
    switch self {
    case .json: return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    case .swift, .dsh: return "\\u{" + hex + "}"
    }
  }
}
