import DataSourceKit

/// An item as a view shows it, for diffing: its identity (the key field, or the whole value)
/// and its content.
struct ViewElement: Equatable {
  var id: Value
  var item: Value
}

/// What each name's view showed when it was last shown, asked or reported: `changes` and
/// `watch` diff against it.
///
/// A `show` stays O(window): the baseline of a name shown since data last changed is captured
/// only just before a statement that may change data.
@MainActor
final class ChangeTracker {
  typealias ViewData = [DiffSection<Value, ViewElement>]

  private var baselines: [String: ViewData] = [:]
  /// Names whose changes print after every statement that changes them.
  private(set) var watched: [String] = []
  /// Names shown since data last changed: their baseline is what they show now.
  private var shownSinceChange: Set<String> = []

  /// A name was bound again: a watched one starts from what it shows now, another has no
  /// baseline until it is shown.
  func rebound(_ name: String, to value: ScriptValue) {
    baselines[name] = watched.contains(name) ? Self.viewData(of: value) : nil
  }

  /// A name was shown: what it shows is its baseline until data changes.
  func shown(_ name: String) {
    baselines[name] = nil
    shownSinceChange.insert(name)
  }

  /// Before a statement that may change data: views shown since the last change keep what
  /// they showed as their baseline.
  func captureShownBaselines(_ bindings: BindingTable) {
    for name in shownSinceChange {
      if let binding = bindings[name] { baselines[name] = Self.viewData(of: binding.value) }
    }
    shownSinceChange.removeAll()
  }

  /// The batch of a name's view since its baseline, checked by UIKit's rules.
  ///
  /// The baseline moves to now. `nil` when the name has no baseline yet.
  func takeChanges(of name: String, value: ScriptValue) throws(BatchUpdateError) -> Changeset<Value>? {
    if shownSinceChange.remove(name) != nil {
      // Shown, and nothing changed since: what it shows is its baseline.
      baselines[name] = Self.viewData(of: value)
    }
    guard let baseline = baselines[name], let current = Self.viewData(of: value) else { return nil }
    baselines[name] = current
    let changeset = SectionedDiff.changeset(
      from: baseline, to: current, id: \.id, contentEqual: { $0.item == $1.item })
    // Every batch printed is one UIKit would accept.
    try changeset.update.validate(
      before: baseline.map(\.elements.count), after: current.map(\.elements.count))
    return changeset
  }

  /// Starts or stops watching a name; watching starts from what it shows now.
  func watch(_ name: String, value: ScriptValue) -> Bool {
    guard let data = Self.viewData(of: value) else { return false }
    if !watched.contains(name) { watched.append(name) }
    baselines[name] = data
    return true
  }

  func unwatch(_ name: String) { watched.removeAll { $0 == name } }

  /// What a view shows now: its sections (identified by key, else title, else position) and
  /// their items (identified by the key field, else the whole value).
  static func viewData(of value: ScriptValue) -> ViewData? {
    switch value {
    case .provider(let provider):
      return viewData(of: TableAdapter(provider: provider.provider, presenter: Session.recordPresenter))
    case .table(let table):
      return viewData(of: table)
    case .presenter, .scalar:
      return nil
    }
  }

  static func viewData(of source: any SectionedDataSource<Value>) -> ViewData {
    // A segment's sections are its own: switching replaces every section, as `switch` reports.
    let segment = Session.segmentedSource(in: source).map { Value.string($0.selectedName) }
    return (0..<source.numberOfSections).map { section in
      let key = source.identityKey(inSection: section)
      var id: Value =
        source.sectionKey(section) ?? source.supplementaryLines(.header, inSection: section).first.map {
          .string($0)
        } ?? .int(section)
      if let segment { id = .list([segment, id]) }
      let elements = (0..<source.numberOfRows(inSection: section)).map { row -> ViewElement in
        let item = source.item(at: ItemPath(item: row, section: section))
        if let key, case .record(let record) = item, let identity = record[key] {
          return ViewElement(id: identity, item: item)
        }
        return ViewElement(id: item, item: item)
      }
      return DiffSection(id: id, elements: elements)
    }
  }
}
