import DataSourceKit
import DataSourceKitFiles
import DataSourceKitPostgres
import DataSourceKitValues

/// Notes the session prints after a statement: what a load noticed (a column that is text only
/// because of a few markers) and what expressions did quietly (a division by zero gave null).
///
/// Nothing here stops a statement; each note says what happened and how to change it.
final class SessionNotes {
  /// Told by compiled expressions as they run, whenever that is (a template runs at `show`).
  let collector = ExpressionNotes()
  private var pending: [String] = []
  /// Set while a file named on dsh's command line is opened: a null marker's advice then also
  /// gives the flag that reads it (`dsh --null NA penguins.csv`).
  var openingFromCommandLine = false

  /// A note for each column a load read as text only because of a few markers:
  /// `penguins.csv: bill_length_mm is text because of "NA" (2 rows); add null "NA" to read it as numbers`.
  ///
  /// - Parameter written: the source as the statement wrote it (`csv "penguins.csv" key id`):
  ///   a null marker's advice then gives the whole source to write, options and all.
  func markers(in provider: any DataProvider<Value>, source: ProviderExpression, written: String? = nil) {
    let name: String
    switch source.source {
    case .csv(let path), .json(let path), .parquet(let path), .sqlite(let path, _, _): name = path
    case .postgres(let url, _, _): name = (try? PostgresLocation(url).display) ?? url
    case .http(let url): name = url
    case .array, .range: return
    }
    markers(in: provider, named: name, written: written)
  }

  /// The notes of every file provider below `root` (what `reload` loaded again: a column may
  /// have turned to text).
  func markers(below root: any CompositionNode) {
    var pending: [any CompositionNode] = [root]
    var seen: Set<ObjectIdentifier> = []
    while let node = pending.popLast() {
      guard seen.insert(ObjectIdentifier(node)).inserted else { continue }
      switch node {
      case let file as any ReadsAFile & DataProvider<Value>: markers(in: file, named: file.displayPath)
      case let editable as EditableProvider<Value>:
        // An editable table describes itself as its source: the file is below it.
        if let source = editable.source as? any CompositionNode { pending.append(source) }
      default: pending.append(contentsOf: node.nodeChildren)
      }
    }
  }

  private func markers(in provider: any DataProvider<Value>, named name: String, written: String? = nil) {
    for note in (provider as? any ReadsAFile)?.leftOutNotes ?? [] { pending.append("\(name): \(note)") }
    // A name the header repeats: one note for all its repeats.
    var repeats: [(original: String, names: [String])] = []
    for profile in provider.fieldProfiles ?? [] {
      guard let original = profile.renamedFrom else { continue }
      if let index = repeats.firstIndex(where: { $0.original == original }) {
        repeats[index].names.append(profile.name)
      } else {
        repeats.append((original, [profile.name]))
      }
    }
    for (original, names) in repeats {
      pending.append(
        "\(name): the header names \(original) \(names.count == 1 ? "twice" : "\(names.count + 1) times"); "
          + "the repeat\(names.count == 1 ? " is" : "s are") read as \(SessionNotes.list(names))")
    }
    for profile in provider.fieldProfiles ?? [] {
      if let reason = profile.textReason { pending.append("\(name): \(profile.name) is text: \(reason)") }
    }
    // Dates written with slashes (`2012/01/31`, `01/31/2012`), which no ISO reading takes: the
    // `types` line that reads them: a CSV or JSON file's, held once loaded (a database's rows
    // are not read for a note, and a Parquet file's columns are typed).
    let base = (provider as? EditableProvider<Value>)?.source ?? provider
    if base is CSVProvider || base is JSONProvider {
      for profile in provider.fieldProfiles ?? [] where profile.type == .text {
        guard let (format, example) = Self.slashDateFormat(of: provider, field: profile.name) else {
          continue
        }
        let types = "types {\(Self.fieldWritten(profile.name)): date \(JSONWriter.quoted(format))}"
        let ambiguous =
          format == "%m/%d/%Y" && example.ambiguous ? " (or \"%d/%m/%Y\" if the day comes first)" : ""
        pending.append(
          "\(name): \(profile.name) is text: its values are dates written \(example.text); add \(types)\(ambiguous) to read them as dates"
        )
      }
    }
    // Columns made text by the same markers share one note.
    var groups: [(markers: [Marker], fields: [String], mixed: Bool)] = []
    for profile in provider.fieldProfiles ?? [] where !profile.markers.isEmpty {
      let same = { (a: [Marker]) in
        a.map(\.text) == profile.markers.map(\.text) && a.map(\.count) == profile.markers.map(\.count)
      }
      if let index = groups.firstIndex(where: { same($0.markers) }) {
        groups[index].fields.append(profile.name)
      } else {
        groups.append((profile.markers, [profile.name], profile.type == nil))
      }
    }
    for (markers, fields, mixed) in groups {
      let quoted = markers.map { JSONWriter.quoted($0.text) }
      let rows = markers.reduce(0) { $0 + $1.count }
      let wouldBe = markers[0].wouldBe
      let kind = wouldBe.isNumber ? "numbers" : "\(wouldBe.rawValue)s"
      let one = fields.count == 1
      let what =
        mixed
        ? (one ? "mixes \(kind) with" : "mix \(kind) with")
        : (one ? "is text because of" : "are text because of")
      let counted = "\(ValueFormat.grouped(String(rows))) row\(rows == 1 ? "" : "s")\(one ? "" : " each")"
      pending.append(
        "\(name): \(SessionNotes.list(fields)) \(what) \(SessionNotes.list(quoted)) (\(counted)); "
          + SessionNotes.advice(
            for: markers, fields: fields, kind: kind, written: written,
            commandLine: openingFromCommandLine ? name : nil))
    }
  }

  /// What to do about the texts that kept columns from a type: a text that stands for a missing
  /// value is read as null (`add null "NA"`); one that is a value written another way is read
  /// by the type with its format (`types {day: date "%Y-%m-%d"}` reads `2013-1-5`); any other is
  /// a value the column does not hold, which a null marker would silently drop.
  ///
  /// With `written` (the source as written), the null markers' advice ends with the source to
  /// write instead: `csv "penguins.csv" null "NA"`, which a user who opened the file by its name
  /// (`dsh penguins.csv`) never typed.
  ///
  /// With `commandLine` (the file's path, when it was named on dsh's command line), the flag that
  /// reads the markers there too: `dsh --null NA penguins.csv`.
  static func advice(
    for markers: [Marker], fields: [String], kind: String, written: String? = nil, commandLine: String? = nil
  ) -> String {
    let one = fields.count == 1
    let missing = markers.filter { looksMissing($0.text) }.map { JSONWriter.quoted($0.text) }
    let others = markers.filter { !looksMissing($0.text) }
    var advice: [String] = []
    if !missing.isEmpty {
      let option = "null \(missing.joined(separator: ", "))"
      advice.append(
        "add \(option)"
          + (others.isEmpty ? " to read \(one ? "it" : "them") as \(kind)" : " for the missing values")
          + (written.map { ": \($0) \(option)" } ?? "")
          + (commandLine.map { path in
            ", or open it with dsh "
              + markers.filter { looksMissing($0.text) }.map { "--null " + ShellText.word($0.text) }
              .joined(separator: " ")
              + " " + ShellText.word(path)
          } ?? ""))
    }
    guard !others.isEmpty else { return advice.joined() }
    let quoted = SessionNotes.list(others.map { JSONWriter.quoted($0.text) })
    let type = markers[0].wouldBe
    if let format = format(reading: others.map(\.text), as: type) {
      let types = fields.map { "\(fieldWritten($0)): \(type.rawValue) \(JSONWriter.quoted(format))" }
      advice.append("types {\(types.joined(separator: ", "))} reads \(quoted)")
    } else {
      let article = type.isNumber ? "a number" : "a \(type.rawValue)"
      advice.append(
        "\(quoted) \(others.count == 1 ? "is" : "are") not \(article): correct \(others.count == 1 ? "it" : "them") at the source (a null marker would drop \(others.count == 1 ? "it" : "them"))"
      )
    }
    return advice.joined(separator: "; ")
  }

  /// A field's name as a `types {…}` key: as it is when it is a word, else quoted.
  static func fieldWritten(_ name: String) -> String {
    let word =
      name.first.map { $0 == "_" || ($0.isASCII && $0.isLetter) } == true
      && name.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
    return word && !Vocabulary.reservedWords.contains(name) ? name : JSONWriter.quoted(name)
  }

  /// Whether a text is one data sets write for a missing value (what pandas and R read as NA).
  static func looksMissing(_ text: String) -> Bool {
    let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
    return [
      "", "na", "n/a", "#n/a", "n.a.", "nan", "-nan", "null", "none", "nil", "-", "--", "?", ".", "missing",
      "unknown", "#null!", "#value!", "#div/0!", "-1.#ind", "1.#qnan", "<na>",
    ].contains(trimmed)
  }

  /// The format of `type` that reads every one of `texts`, among the ISO forms dsh reads without
  /// one: a date or time written without its leading zeros (`2013-1-5`) is read by them.
  static func format(reading texts: [String], as type: ValueType) -> String? {
    let formats: [String] =
      switch type {
      case .date: ["%Y-%m-%d", "%Y/%m/%d"]
      case .timestamp: ["%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S"]
      default: []
      }
    return formats.first { format in texts.allSatisfy { CalendarDate.parse($0, format: format) != nil } }
  }

  /// The format that reads field `field` of the provider's first rows as dates written with
  /// slashes, with one of them and whether the day and the month could be either way round;
  /// `nil` when a value is not such a date (or there are none).
  static func slashDateFormat(of provider: any DataProvider<Value>, field: String)
    -> (format: String, example: (text: String, ambiguous: Bool))?
  {
    guard provider.numberOfSections > 0 else { return nil }
    var texts: [String] = []
    for item in 0..<min(provider.numberOfItems(inSection: 0), 200) where texts.count < 50 {
      guard case .record(let record) = provider.item(at: ItemPath(item: item, section: 0)) else { return nil }
      switch record[field] {
      case .string(let text): texts.append(text)
      case .null, nil: continue
      default: return nil
      }
    }
    guard !texts.isEmpty else { return nil }
    let parts = texts.map { $0.split(separator: "/", omittingEmptySubsequences: false) }
    guard parts.allSatisfy({ $0.count == 3 && $0.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) } })
    else { return nil }
    let format: String
    var ambiguous = false
    if parts.allSatisfy({ $0[0].count == 4 }) {
      format = "%Y/%m/%d"
    } else if parts.allSatisfy({ $0[2].count == 4 && $0[0].count <= 2 && $0[1].count <= 2 }) {
      // Day first when a first part is past twelve; month first otherwise, said when no second
      // part is past twelve either (then either reading gives dates).
      if parts.contains(where: { Int($0[0]).map { $0 > 12 } == true }) {
        format = "%d/%m/%Y"
      } else {
        format = "%m/%d/%Y"
        ambiguous = !parts.contains(where: { Int($0[1]).map { $0 > 12 } == true })
      }
    } else {
      return nil
    }
    guard texts.allSatisfy({ CalendarDate.parse($0, format: format) != nil }) else { return nil }
    return (format, (texts[0], ambiguous))
  }

  /// `a, b and c`.
  static func list(_ words: [String]) -> String {
    guard words.count > 1 else { return words.first ?? "" }
    return words.dropLast().joined(separator: ", ") + " and " + (words.last ?? "")
  }

  /// A note of the statement's own, said after it.
  func add(_ note: String) { pending.append(note) }

  /// The notes since the last call, in order.
  func take() -> [String] {
    let notes = pending + Self.folded(collector.take())
    pending = []
    return notes
  }

  /// Each note as a line, except that a conversion that found no value in more than three
  /// texts is one line with the first three: `date(name)` over 22,000 names said so 22,000 times.
  static func folded(_ notes: [(note: ExpressionNote, count: Int)]) -> [String] {
    var lines: [String] = []
    var groups: [String: (line: Int, examples: [(String, Int)])] = [:]
    for (note, count) in notes {
      guard case .notConvertible(let function, let example) = note else {
        lines.append(note.text(count: count))
        continue
      }
      if groups[function] == nil {
        groups[function] = (lines.count, [])
        lines.append("")
      }
      groups[function]?.examples.append((example, count))
    }
    for (function, group) in groups {
      let total = group.examples.reduce(0) { $0 + $1.1 }
      guard group.examples.count > 3 else {
        lines[group.line] = group.examples.map {
          ExpressionNote.notConvertible(function: function, example: $0.0).text(count: $0.1)
        }.joined(separator: "\n")
        continue
      }
      let shown = group.examples.prefix(3).map(\.0).joined(separator: ", ")
      lines[group.line] =
        "\(function)() found no value in \(shown) and \(ValueFormat.grouped(String(group.examples.count - 3))) "
        + "other value\(group.examples.count - 3 == 1 ? "" : "s"), "
        + "and gave null (\(ValueFormat.grouped(String(total))) times)"
    }
    return lines.flatMap { $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
  }
}
