import DataSourceKit
import DataSourceKitRendering
import DataSourceKitValues
import Foundation

/// What Tab completes at a point in a line: commands at the start of a statement, setting names
/// and values after `set`, help topics after `help`, fields after `by`, `where`, `and`, `or` and
/// inside a template's `{`, and otherwise keywords and bound names.
@MainActor
public struct Completer {
  /// Words a field name follows: `sort by`, `where`, `and`, `or`, `not`, `key`.
  private static let wordsBeforeFields: Set<String> = Set(
    [Keyword.by, .and, .or, .not].map(\.rawValue) + [
      StageKind.where.rawValue, ProviderOptionName.key.rawValue,
    ])

  /// Commands whose first word is a view: a bound name or an expression.
  private static let commandsBeforeExpressions: Set<Command> = [
    .show, .browse, .describe, .explain, .export, .changes, .watch, .serve,
  ]
  /// Commands whose first word is a bound name.
  private static let commandsBeforeNames: Set<Command> = [.update, .move, .reload, .more, .unwatch]

  public let session: Session

  public init(session: Session) { self.session = session }

  /// The word being completed starts at `wordStart` (a byte offset in `line`); `candidates` are the
  /// words that could replace it, sorted.
  ///
  /// A single candidate is followed by a space, except a folder (it ends in `/`), a file inside a
  /// string (the string is closed instead) or a template field (the brace is closed instead).
  public func complete(_ line: String, cursor: Int) -> (wordStart: Int, candidates: [String]) {
    if let paths = completePath(line, cursor: cursor) { return paths }
    let bytes = Array(line.utf8.prefix(cursor))
    var start = bytes.count
    while start > 0, isWordByte(bytes[start - 1]) { start -= 1 }
    let word = String(decoding: bytes[start...], as: UTF8.self)
    let before = String(decoding: bytes[..<start], as: UTF8.self)
    let previousWords = before.split(whereSeparator: {
      $0 == " " || $0 == "\t" || $0 == "|" || $0 == "(" || $0 == ","
    })
    let previous = previousWords.last.map(String.init)
    let command = previousWords.first.flatMap { Command(rawValue: String($0)) }
    let statementStart =
      previousWords.isEmpty || before.hasSuffix(";")
      || before.trimmingCharacters(in: .whitespaces).hasSuffix(";")

    // Past a `|` the words are stages and decorations, whatever command the line began with.
    let inPipeline = before.contains("|")
    let pool: [String]
    if isInsideTemplateField(before) {
      // A field in a template is completed with its closing brace: `{spe` becomes `{species}`.
      let candidates = Set(fieldsInScope(before).filter { $0.hasPrefix(word) }.map { $0 + "}" })
      return (start, candidates.sorted())
    } else if statementStart {
      pool = Vocabulary.statementStarters + Vocabulary.expressionStarters + session.boundNames
    } else if command == .set, previousWords.count == 1 {
      pool = SettingName.allCases.map(\.rawValue)
    } else if command == .set, previousWords.count == 2 {
      pool = SettingName(rawValue: String(previousWords[1]))?.values ?? []
    } else if command == .help, previousWords.count == 1 {
      pool = HelpCatalogue.topics.map(\.name)
    } else if command == .switch, previousWords.count == 1 {
      pool = session.boundNames.filter { !session.segments(of: $0).isEmpty }
    } else if command == .switch, previousWords.count == 2 {
      pool = [PlaceWord.to.rawValue]
    } else if command == .switch, previousWords.count == 3, previous == PlaceWord.to.rawValue {
      pool = session.segments(of: String(previousWords[1]))
    } else if !inPipeline, let command, Self.commandsBeforeExpressions.contains(command),
      previousWords.count == 1
    {
      // `show ` takes a view: a bound name, or a provider or builder to make one.
      pool = session.boundNames + Vocabulary.expressionStarters
    } else if !inPipeline, command == .let, previousWords.count == 3, previous == "=" {
      pool = session.boundNames + Vocabulary.expressionStarters
    } else if !inPipeline, let command, Self.commandsBeforeNames.contains(command), previousWords.count == 1 {
      pool = session.boundNames
    } else if previous == PlaceWord.into.rawValue || previous == PlaceWord.from.rawValue,
      command == .insert || command == .delete
    {
      pool = session.boundNames
    } else if !inPipeline, command == .show, previousWords.count == 2,
      session.boundNames.contains(String(previousWords[1]))
    {
      // After the view: a window of its rows, a format, or a stage.
      pool = [Keyword.rows.rawValue, Keyword.as.rawValue]
    } else if let previous, Self.wordsBeforeFields.contains(previous) {
      pool = fieldsInScope(before)
    } else if previous == PlaceWord.ignoring.rawValue {
      pool = ["case"]
    } else if previous == Keyword.as.rawValue {
      pool = RenderMode.allCases.map(\.rawValue)
    } else if previous == BuilderKind.cell.rawValue {
      pool = CellStyle.allCases.map(\.rawValue)
    } else if previous == CellOptionName.accessory.rawValue {
      pool = CellAccessory.allCases.map(\.rawValue)
    } else if before.hasSuffix("| ") || before.hasSuffix("|") {
      pool = Vocabulary.pipelineWords
    } else {
      pool = Vocabulary.expressionStarters + session.boundNames + Vocabulary.continuationWords
    }
    var candidates = Set(pool.filter { $0.hasPrefix(word) && $0 != word || (word.isEmpty && !$0.isEmpty) })
    // A word typed whole (a bound name `f`) stays one of the answers: a longer word (`false`)
    // is offered beside it, never put in its place.
    if !word.isEmpty, !candidates.isEmpty, pool.contains(word) { candidates.insert(word) }
    return (start, candidates.sorted())
  }

  /// Paths inside the string after `csv`, `json`, `source` or `save`: the entries of the folder typed
  /// so far.
  ///
  /// A folder comes with `/`, a file with the closing quote.
  private func completePath(_ line: String, cursor: Int) -> (wordStart: Int, candidates: [String])? {
    let bytes = Array(line.utf8.prefix(cursor))
    guard let quote = bytes.lastIndex(of: UInt8(ascii: "\"")),
      bytes.filter({ $0 == UInt8(ascii: "\"") }).count % 2 == 1
    else { return nil }
    let command =
      String(decoding: bytes[..<quote], as: UTF8.self).split(separator: " ").last.map(String.init) ?? ""
    // Each command is offered the files it reads (and every folder).
    let wanted: [String]
    if let kind = ProviderKind(rawValue: command), !kind.fileExtensions.isEmpty {
      wanted = kind.fileExtensions
    } else if command == Command.source.rawValue || command == Command.save.rawValue {
      wanted = ["dsh"]
    } else {
      return nil
    }
    let typed = String(decoding: bytes[(quote + 1)...], as: UTF8.self)
    let folder = typed.contains("/") ? String(typed[...(typed.lastIndex(of: "/") ?? typed.startIndex)]) : ""
    let prefix = String(typed.dropFirst(folder.count))
    let base = folder.hasPrefix("/") ? folder : session.resolve(folder.isEmpty ? "." : folder)
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
    let candidates = entries.filter {
      $0.hasPrefix(prefix) && !$0.hasPrefix(".") || (prefix.hasPrefix(".") && $0.hasPrefix(prefix))
    }
    .map { entry -> String in
      var isDirectory: ObjCBool = false
      _ = FileManager.default.fileExists(atPath: base + "/" + entry, isDirectory: &isDirectory)
      return entry + (isDirectory.boolValue ? "/" : "\"")
    }
    .filter { name in
      name.hasSuffix("/") || wanted.contains { name.dropLast().lowercased().hasSuffix("." + $0) }
    }
    .filter { name in
      // Under --safe, only what the sandbox would let dsh read: a file it allows, a folder below
      // the allowed one or on the way to an allowed file. Nothing else is named, not even a
      // folder's entries.
      guard let sandbox = session.environment.sandbox else { return true }
      let path = base + "/" + name.dropLast()
      if sandbox.allowsReading(path) { return true }
      guard name.hasSuffix("/") else { return false }
      let folder = Sandbox.canonical(path) + "/"
      return sandbox.allowedFiles.contains { $0.hasPrefix(folder) }
    }
    return (quote + 1 + folder.utf8.count, candidates.sorted())
  }

  private func isWordByte(_ b: UInt8) -> Bool {
    (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
      || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "_") || b >= 0x80
  }

  private func isInsideTemplateField(_ before: String) -> Bool {
    guard let brace = before.lastIndex(of: "{") else { return false }
    let quotes = before[..<brace].filter { $0 == "\"" }.count
    return quotes % 2 == 1 && !before[brace...].contains("}")
  }

  /// Fields of the names bound so far that appear in the line.
  private func fieldsInScope(_ before: String) -> [String] {
    let words = before.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).map(String.init)
    return words.flatMap { session.fields(of: $0) }
  }
}
