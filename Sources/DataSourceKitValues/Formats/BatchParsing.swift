import DataSourceKit

/// Why a batch could not be read back: where in the text, and what was expected there.
public struct BatchParseError: Error, Equatable, Sendable, CustomStringConvertible {
  /// From 1.
  public var line: Int
  /// From 1, in characters.
  public var column: Int
  /// What is wrong with the file.
  public var message: String

  /// A description for people.
  public var description: String { "\(line):\(column): \(message)" }
}

extension BatchUpdate {
  /// The names of the JSON form's lists, in the order `changes … as json` prints them.
  package static let jsonKeys = [
    "deletedSections", "insertedSections", "movedSections", "deletedRows", "insertedRows", "movedRows",
    "reloadedRows", "reloadedAfterMoves", "reloadedHeaders", "reloadedFooters", "reloadedPlaceholders",
  ]

  /// Reads a batch back from what dsh prints: the JSON of `changes … as json` (a missing list is
  /// empty), or the text of `changes` (``description``, each line a kind of change, optionally
  /// after `NAME: ` as `changes` prefixes it), so a batch logged by an app or pasted from a
  /// crash investigation can be checked again.
  ///
  /// - Throws: ``BatchParseError`` with the line and column of the first thing that is not part
  ///   of a batch.
  package init(parsing text: String) throws(BatchParseError) {
    let first = text.first(where: { !$0.isWhitespace })
    guard let first else {
      throw BatchParseError(
        line: 1, column: 1,
        message: "the file holds no batch (a batch without changes is 'no changes', or {})")
    }
    if first == "{" || first == "[" {
      self = try Self.parseJSON(text)
    } else {
      self = try Self.parseText(text)
    }
  }

  // MARK: JSON

  private static func parseJSON(_ text: String) throws(BatchParseError) -> BatchUpdate {
    var copy = text
    let parsed: Result<Value, BatchParseError> = copy.withUTF8 { bytes in
      do {
        return .success(try JSONReader.parse(String(decoding: bytes, as: UTF8.self)))
      } catch let failure as JSONReader.Failure {
        let (line, column) = failure.location(in: bytes)
        return .failure(BatchParseError(line: line, column: column, message: failure.message))
      } catch {
        return .failure(BatchParseError(line: 1, column: 1, message: "\(error)"))
      }
    }
    guard case .record(let record) = try parsed.get() else {
      throw BatchParseError(line: 1, column: 1, message: "expected an object with the batch's lists")
    }
    var update = BatchUpdate()
    for field in record.fields {
      /// Where the key is written, for errors about it or its value.
      func fail(_ message: String) -> BatchParseError {
        let (line, column) = location(of: "\"\(field.name)\"", in: text)
        return BatchParseError(line: line, column: column, message: message)
      }
      guard jsonKeys.contains(field.name) else {
        let fix = suggestion(for: field.name, among: jsonKeys).map { "; did you mean '\($0)'?" } ?? ""
        throw fail("unknown list '\(field.name)'\(fix) (a batch has \(jsonKeys.joined(separator: ", ")))")
      }
      guard case .list(let items) = field.value else { throw fail("'\(field.name)' must be a list") }
      func int(_ value: Value) throws(BatchParseError) -> Int {
        guard case .int(let i) = value, i >= 0 else {
          throw fail("'\(field.name)' holds \(value.literalText) where a section number (0 or more) goes")
        }
        return i
      }
      func path(_ value: Value) throws(BatchParseError) -> ItemPath {
        guard case .list(let pair) = value, pair.count == 2, case .int(let s) = pair[0],
          case .int(let i) = pair[1]
        else {
          throw fail("'\(field.name)' holds \(value.literalText) where [section, row] goes")
        }
        return ItemPath(item: i, section: s)
      }
      func pair(_ value: Value) throws(BatchParseError) -> (Value, Value) {
        guard case .list(let pair) = value, pair.count == 2 else {
          throw fail("'\(field.name)' holds \(value.literalText) where [from, to] goes")
        }
        return (pair[0], pair[1])
      }
      switch field.name {
      case "deletedSections": update.deletedSections = try items.map(int)
      case "insertedSections": update.insertedSections = try items.map(int)
      case "reloadedHeaders": update.reloadedHeaders = try items.map(int)
      case "reloadedFooters": update.reloadedFooters = try items.map(int)
      case "reloadedPlaceholders": update.reloadedPlaceholders = try items.map(int)
      case "movedSections":
        for item in items {
          let (from, to) = try pair(item)
          update.movedSections.append((try int(from), try int(to)))
        }
      case "deletedRows": update.deletedRows = try items.map(path)
      case "insertedRows": update.insertedRows = try items.map(path)
      case "reloadedRows": update.reloadedRows = try items.map(path)
      case "reloadedAfterMoves": update.reloadedAfterMoves = try items.map(path)
      default:  // "movedRows"
        for item in items {
          let (from, to) = try pair(item)
          update.movedRows.append((try path(from), try path(to)))
        }
      }
    }
    return update
  }

  /// The line and column of the first occurrence of `needle` in `text` (1, 1 when absent).
  private static func location(of needle: String, in text: String) -> (Int, Int) {
    var line = 1
    for lineText in text.split(separator: "\n", omittingEmptySubsequences: false) {
      if let range = lineText.range(of: needle) {
        return (line, lineText.distance(from: lineText.startIndex, to: range.lowerBound) + 1)
      }
      line += 1
    }
    return (1, 1)
  }

  // MARK: Text

  /// The kinds of line of the text form, longest first where one starts another.
  private enum LineKind: String, CaseIterable {
    case deleteSections = "delete sections"
    case insertSections = "insert sections"
    case moveSections = "move sections"
    case deleteRows = "delete rows"
    case insertRows = "insert rows"
    case moveRows = "move rows"
    case reloadAfterMoves = "then reload rows"
    case reloadRows = "reload rows"
    case reloadHeaders = "reload headers of sections"
    case reloadFooters = "reload footers of sections"
    case reloadPlaceholders = "reload placeholders of sections"
  }

  private static func parseText(_ text: String) throws(BatchParseError) -> BatchUpdate {
    var update = BatchUpdate()
    var sawName = false
    for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      var cursor = TextCursor(line: Array(rawLine), number: index + 1)
      cursor.skipSpaces()
      if cursor.atEnd || cursor.rest.hasPrefix("#") || cursor.rest.hasPrefix("warning:") { continue }
      // `changes` starts its first line with the name: `t: delete rows [0, 1]`.
      if !sawName, let colon = cursor.line[cursor.position...].firstIndex(of: ":"), colon > cursor.position,
        cursor.line[cursor.position..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
      {
        cursor.position = colon + 1
        cursor.skipSpaces()
      }
      sawName = true
      if cursor.rest == "no changes" { continue }
      guard let kind = LineKind.allCases.first(where: { cursor.rest.hasPrefix($0.rawValue) }) else {
        throw cursor.fail(
          "expected a kind of change: \(LineKind.allCases.map(\.rawValue).joined(separator: ", ")), or 'no changes'"
        )
      }
      cursor.position += kind.rawValue.count
      switch kind {
      case .deleteSections:
        update.deletedSections += try cursor.list { c throws(BatchParseError) in [try c.count()] }
      case .insertSections:
        update.insertedSections += try cursor.list { c throws(BatchParseError) in [try c.count()] }
      case .reloadHeaders:
        update.reloadedHeaders += try cursor.list { c throws(BatchParseError) in [try c.count()] }
      case .reloadFooters:
        update.reloadedFooters += try cursor.list { c throws(BatchParseError) in [try c.count()] }
      case .reloadPlaceholders:
        update.reloadedPlaceholders += try cursor.list { c throws(BatchParseError) in [try c.count()] }
      case .moveSections:
        update.movedSections += try cursor.list { c throws(BatchParseError) in
          let from = try c.count()
          try c.arrow()
          return [(from: from, to: try c.count())]
        }
      case .deleteRows: update.deletedRows += try cursor.list { c throws(BatchParseError) in try c.paths() }
      case .insertRows: update.insertedRows += try cursor.list { c throws(BatchParseError) in try c.paths() }
      case .reloadRows: update.reloadedRows += try cursor.list { c throws(BatchParseError) in try c.paths() }
      case .reloadAfterMoves:
        update.reloadedAfterMoves += try cursor.list { c throws(BatchParseError) in try c.paths() }
      case .moveRows:
        update.movedRows += try cursor.list { c throws(BatchParseError) in
          let from = try c.path()
          try c.arrow()
          return [(from: from, to: try c.path())]
        }
      }
    }
    return update
  }
}

/// Reads one line of the text form.
private struct TextCursor {
  let line: [Character]
  let number: Int
  var position = 0

  var atEnd: Bool { position >= line.count }
  var rest: String { String(line[min(position, line.count)...]) }

  func fail(_ message: String) -> BatchParseError {
    BatchParseError(line: number, column: position + 1, message: message)
  }

  mutating func skipSpaces() {
    while position < line.count, line[position] == " " || line[position] == "\t" || line[position] == "\r" {
      position += 1
    }
  }

  mutating func take(_ text: String) -> Bool {
    skipSpaces()
    let characters = Array(text)
    guard position + characters.count <= line.count,
      Array(line[position..<position + characters.count]) == characters
    else { return false }
    position += characters.count
    return true
  }

  /// Items separated by commas, to the end of the line.
  mutating func list<T>(_ item: (inout TextCursor) throws(BatchParseError) -> [T]) throws(BatchParseError)
    -> [T]
  {
    var items: [T] = []
    repeat {
      items += try item(&self)
    } while take(",")
    skipSpaces()
    guard atEnd else { throw fail("expected ',' or the end of the line") }
    return items
  }

  mutating func int() throws(BatchParseError) -> Int {
    skipSpaces()
    let start = position
    if position < line.count, line[position] == "-" { position += 1 }
    while position < line.count, line[position].isASCII, line[position].isNumber { position += 1 }
    guard let value = Int(String(line[start..<position])) else {
      position = start
      throw fail("expected a number")
    }
    return value
  }

  /// A section or row number: never negative.
  mutating func count() throws(BatchParseError) -> Int {
    skipSpaces()
    let start = position
    let value = try int()
    guard value >= 0 else {
      position = start
      throw fail("a section or row number is never negative")
    }
    return value
  }

  mutating func arrow() throws(BatchParseError) {
    guard take("→") || take("->") else {
      throw fail("expected '→' (or '->') between where it moves from and to")
    }
  }

  mutating func path() throws(BatchParseError) -> ItemPath {
    guard take("[") else { throw fail("expected an index path: [section, row]") }
    let section = try count()
    guard take(",") else { throw fail("expected ',' between the section and the row") }
    let item = try count()
    guard take("]") else { throw fail("expected ']' after the row") }
    return ItemPath(item: item, section: section)
  }

  /// A path, or a run of paths in one section written `[s, a]…[s, b]` (or `...`).
  mutating func paths() throws(BatchParseError) -> [ItemPath] {
    let first = try path()
    guard take("…") || take("...") else { return [first] }
    let runStart = position
    let last = try path()
    guard last.section == first.section, last.item >= first.item else {
      position = runStart
      throw fail("a run of rows ends in the section it starts in, at a later row")
    }
    return (first.item...last.item).map { ItemPath(item: $0, section: first.section) }
  }
}
