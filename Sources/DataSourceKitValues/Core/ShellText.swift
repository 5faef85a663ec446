/// Text written for a POSIX shell to read back exactly, in the commands a message suggests: a
/// file named `x'$(…)'.json` must not run anything when the command is pasted.
package enum ShellText {
  /// `text` in single quotes, each quote in it written `'\''`.
  package static func quoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
  }

  /// `text` as one word of a command line: as it is when it holds only characters no shell
  /// reads specially (letters, digits, `-_./:@%+=,`), else ``quoted(_:)``.
  package static func word(_ text: String) -> String {
    let plain =
      !text.isEmpty
      && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_./:@%+=,".contains($0)) }
    return plain ? text : quoted(text)
  }
}
