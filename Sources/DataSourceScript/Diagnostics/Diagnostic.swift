import DataSourceKit
import DataSourceKitValues

/// An error in a statement: what went wrong (from the message catalogue) and where.
public struct Diagnostic: Error, Sendable, Equatable {
  public var message: DiagnosticMessage
  public var range: SourceRange

  public init(_ message: DiagnosticMessage, at range: SourceRange) {
    self.message = message
    self.range = range
  }
}

extension Diagnostic {
  /// The diagnostic as the user sees it.
  ///
  /// For example:
  ///
  ///     tour.dsh:3:14: error: no field 'nmae' in people; did you mean 'name'?
  ///     let t = table people with cell basic "{nmae}"
  ///                                            ^~~~
  public func formatted(in source: SourceFile, color: Bool = false) -> String {
    let (line, column, rawLineText) = source.location(of: range.lowerBound)
    // A connection string's password is never shown, not even in the line it was typed on.
    let lineText = Secrets.redacted(String(rawLineText))
    let place = source.name.map { "\($0):\(line):\(column): " } ?? ""
    let label = color ? "\u{1B}[1;31merror:\u{1B}[0m" : "error:"
    // Names, paths and values in a message can come from data: nothing in them reaches the
    // terminal raw.
    var out =
      TextWidth.escapedForTerminal(place) + label + " "
      + TextWidth.escapedForTerminal(Secrets.redacted(message.text)) + "\n"
    let expandedLine = lineText.replacingOccurrences(of: "\t", with: " ")
    out += TextWidth.escapedForTerminal(expandedLine) + "\n"
    // The caret sits under the first character of the range; tildes mark the rest of it on the line.
    let rawPrefix = String(rawLineText.prefix(column - 1))
    let shownPrefix = Secrets.redacted(rawPrefix)
    let prefix = TextWidth.escapedForTerminal(shownPrefix.replacingOccurrences(of: "\t", with: " "))
    let lineEndOffset = range.lowerBound + (rawLineText.utf8.count - rawPrefix.utf8.count)
    let spanEnd = min(range.upperBound, lineEndOffset)
    let spanText =
      source.text.utf8.count >= spanEnd && spanEnd > range.lowerBound
      // The span alone: copying the whole file's bytes for it made every error cost the file.
      ? TextWidth.escapedForTerminal(Secrets.redacted(source.text(range.lowerBound..<spanEnd)))
      : ""
    let indent = String(repeating: " ", count: displayWidth(prefix))
    let tildes = max(0, displayWidth(spanText) - 1)
    out += indent + "^" + String(repeating: "~", count: tildes)
    return out
  }

  private func displayWidth(_ s: String) -> Int { TextWidth.of(s) }
}
