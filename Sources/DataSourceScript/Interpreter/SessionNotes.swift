import DataSourceKit
import DataSourceKitFiles
import DataSourceKitPostgres
import DataSourceKitSQLite

/// Notes the session prints after a statement: what a load noticed (a column that is text only
/// because of a few markers) and what expressions did quietly (a division by zero gave null).
///
/// Nothing here stops a statement; each note says what happened and how to change it.
final class SessionNotes {
  /// Told by compiled expressions as they run, whenever that is (a template runs at `show`).
  let collector = ExpressionNotes()
  private var pending: [String] = []

  /// A note for each column a load read as text only because of a few markers:
  /// `penguins.csv: bill_length_mm is text because of "NA" (2 rows); add null "NA" to read it as numbers`.
  func markers(in provider: any DataProvider<Value>, source: ProviderExpression) {
    let name: String
    switch source.source {
    case .csv(let path), .json(let path), .sqlite(let path, _, _): name = path
    case .postgres(let url, _, _): name = (try? PostgresLocation(url).display) ?? url
    case .http(let url): name = url
    case .array, .range: return
    }
    markers(in: provider, named: name)
  }

  /// The notes of every file provider below `root` (what `reload` loaded again: a column may
  /// have turned to text).
  func markers(below root: any CompositionNode) {
    var pending: [any CompositionNode] = [root]
    var seen: Set<ObjectIdentifier> = []
    while let node = pending.popLast() {
      guard seen.insert(ObjectIdentifier(node)).inserted else { continue }
      switch node {
      case let csv as CSVProvider: markers(in: csv, named: csv.displayPath)
      case let json as JSONProvider: markers(in: json, named: json.displayPath)
      case let sqlite as SQLiteProvider: markers(in: sqlite, named: sqlite.displayPath)
      case let editable as EditableProvider<Value>:
        // An editable table describes itself as its source: the file is below it.
        if let source = editable.source as? any CompositionNode { pending.append(source) }
      default: pending.append(contentsOf: node.nodeChildren)
      }
    }
  }

  private func markers(in provider: any DataProvider<Value>, named name: String) {
    for profile in provider.fieldProfiles ?? [] {
      if let reason = profile.textReason { pending.append("\(name): \(profile.name) is text: \(reason)") }
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
      let kind = markers[0].wouldBe.isNumber ? "numbers" : "\(markers[0].wouldBe.rawValue)s"
      let one = fields.count == 1
      pending.append(
        "\(name): \(SessionNotes.list(fields)) \(mixed ? (one ? "mixes \(kind) with" : "mix \(kind) with") : (one ? "is text because of" : "are text because of")) \(SessionNotes.list(quoted)) (\(rows) row\(rows == 1 ? "" : "s")\(one ? "" : " each")); add null \(quoted.joined(separator: ", ")) to read \(one ? "it" : "them") as \(kind)"
      )
    }
  }

  /// `a, b and c`.
  static func list(_ words: [String]) -> String {
    guard words.count > 1 else { return words.first ?? "" }
    return words.dropLast().joined(separator: ", ") + " and " + (words.last ?? "")
  }

  /// The notes since the last call, in order.
  func take() -> [String] {
    let notes = pending + collector.take().map { $0.note.text(count: $0.count) }
    pending = []
    return notes
  }
}
