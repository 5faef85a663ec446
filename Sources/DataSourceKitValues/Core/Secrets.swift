import DataSourceKit
import Foundation

/// Passwords taken out of text that describes a source: a connection string's password never
/// reaches a message, `describe`, `save`, the history, an echoed statement or a generated program.
///
/// A password is left out, not masked: what remains still connects, and takes the password
/// from where libpq finds it otherwise (`PGPASSWORD`, the password file), as a saved script must.
public enum Secrets {
  /// `text` without the passwords of the connection strings in it.
  ///
  /// A URL's `//USER:PASSWORD@` becomes `//USER@` and its query's `password=…` is dropped,
  /// wherever they are; a `password=…` word is dropped from a quoted string made only of
  /// `key=value` words (libpq's other form). Other text, a query's SQL among it, is left as it is.
  public static func redacted(_ text: String) -> String {
    // Most text holds neither: left as it is, at the cost of two searches.
    guard text.contains("://") || mentionsPassword(text) else {
      return text
    }
    var result = text
    result.replace(urlPassword) { match in match.output.1 + "@" }
    result.replace(queryPassword) { match in match.output.1 == "?" ? "?" : "" }
    result.replace(quoted) { match -> String in
      let content = String(match.output.1)
      guard content.wholeMatch(of: keyValueWords) != nil else { return String(match.output.0) }
      var words = content
      words.replace(passwordWord, with: "")
      return "\"" + words.trimmingCharacters(in: .whitespaces) + "\""
    }
    return result
  }

  /// Whether `text` holds "password" in any case: its bytes compared, ASCII letters folded (the
  /// word is ASCII), where Foundation's case-insensitive search costs a statement's start.
  static func mentionsPassword(_ text: String) -> Bool {
    let word = Array("password".utf8)
    let bytes = Array(text.utf8)
    guard bytes.count >= word.count else { return false }
    // A byte ORed with 0x20 is a lower-case letter only when it was that letter in either case.
    return (0...(bytes.count - word.count)).contains { start in
      word.indices.allSatisfy { bytes[start + $0] | 0x20 == word[$0] }
    }
  }

  /// `scheme://user:password@`: the user is kept.
  private static var urlPassword: Regex<(Substring, Substring)> {
    /([A-Za-z][A-Za-z0-9+.\-]*:\/\/[^\s\/@:"'?#]*):[^\s\/@"']*@/
  }
  /// `?password=…` or `&password=…` (or `sslpassword`) in a URL's query, and the `&` after it.
  private static var queryPassword: Regex<(Substring, Substring)> {
    /([?&])(?:ssl)?password=[^&\s"'#]*&?/.ignoresCase()
  }
  /// A string literal as dsh writes one: its content.
  private static var quoted: Regex<(Substring, Substring)> { /"((?:[^"\\]|\\.)*)"/ }
  /// libpq's `key=value` form: nothing but such words (a value quoted in single quotes, or
  /// without spaces).
  private static var keyValueWords: Regex<Substring> {
    /\s*(?:[A-Za-z_]+\s*=\s*(?:'(?:[^'\\]|\\.)*'|[^\s']+)\s*)+/
  }
  /// The `password=…` word of such a string (or the `sslpassword=…` of a key), with the space
  /// after it.
  private static var passwordWord: Regex<Substring> {
    /\b(?:ssl)?password\s*=\s*(?:'(?:[^'\\]|\\.)*'|[^\s']+)\s*/.ignoresCase()
  }
}
