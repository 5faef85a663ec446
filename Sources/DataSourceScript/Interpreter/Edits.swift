import DataSourceKit

/// An item as a view shows it, for diffing: its identity (the key field, or the whole value)
/// and its content.
struct ViewElement: Equatable {
  var id: Value
  var item: Value
}

extension Session {
  // MARK: Edits

  /// Inserts, deletes, updates or moves items of an editable provider.
  ///
  /// The new items are worked out first, so a statement that fails changes nothing.
  func apply(_ edit: Edit, to target: Identifier) throws {
    let binding = try binding(named: target)
    guard case .provider(var provider) = binding.value,
      let editable = provider.provider as? EditableProvider<Value>
    else {
      if case .provider(let provider) = binding.value, provider.provider is SQLiteProvider {
        throw Diagnostic(.readOnly(target.name), at: target.range)
      }
      let found =
        if case .provider = binding.value { "a derived provider" } else { binding.value.kindDescription }
      throw Diagnostic(.notEditable(target.name, found: found), at: target.range)
    }
    provider.displayName = target.name
    var items = editable.items
    let message: String
    switch edit {
    case .insert(let value, let valueRange, let at, let atRange):
      let item = try conform(value, to: provider, at: valueRange)
      let position = at ?? items.count
      guard (0...items.count).contains(position) else {
        throw Diagnostic(
          .positionOutside(position, count: items.count, what: target.name), at: atRange ?? target.range)
      }
      items.insert(item, at: position)
      message = "inserted 1 item into \(target.name) at \(position)"
    case .delete(let predicate, let at, let atRange):
      if let predicate {
        let test = try compile(predicate, against: provider)
        let before = items.count
        items.removeAll(where: test)
        message = "deleted \(Session.plural(before - items.count, "item")) from \(target.name)"
      } else {
        let position = at ?? 0
        guard items.indices.contains(position) else {
          throw Diagnostic(
            .positionOutside(position, count: items.count, what: target.name), at: atRange ?? target.range)
        }
        items.remove(at: position)
        message = "deleted item \(position) from \(target.name)"
      }
    case .update(let assignments, let predicate):
      let test = try predicate.map { try compile($0, against: provider) } ?? { _ in true }
      for assignment in assignments {
        try checkField(
          FieldPath(components: [assignment.field.name], range: assignment.field.range), in: provider)
      }
      var count = 0
      for index in items.indices where test(items[index]) {
        guard case .record(let record) = items[index] else {
          throw Diagnostic(
            .notARecord(target.name, found: items[index].typeName), at: assignments[0].field.range)
        }
        var pairs = record.fields.map { ($0.name, $0.value) }
        for assignment in assignments {
          if let position = pairs.firstIndex(where: { $0.0 == assignment.field.name }) {
            pairs[position].1 = assignment.value
          } else {
            pairs.append((assignment.field.name, assignment.value))
          }
        }
        items[index] = .record(
          record.fieldNames.elementsEqual(pairs.map(\.0))
            ? Record(schema: record.schema, values: pairs.map(\.1)) : Record(pairs))
        count += 1
      }
      message = "updated \(Session.plural(count, "item")) of \(target.name)"
    case .move(let from, let to, let range):
      guard items.indices.contains(from) else {
        throw Diagnostic(.positionOutside(from, count: items.count, what: target.name), at: range)
      }
      guard items.indices.contains(to) else {
        throw Diagnostic(.positionOutside(to, count: items.count, what: target.name), at: range)
      }
      items.insert(items.remove(at: from), at: to)
      message = "moved item \(from) of \(target.name) to \(to)"
    }
    editable.replaceItems(items)
    output.write(message + "\n")
  }

  /// A value ready to insert: a record in the provider's field order (missing fields null),
  /// its fields checked against the provider's.
  private func conform(_ value: Value, to provider: ProviderValue, at range: SourceRange) throws -> Value {
    guard let fields = provider.provider.knownFields else { return value }
    guard case .record(let record) = value else {
      throw Diagnostic(
        .expectedKind(
          "a record with fields of \(provider.displayName)", found: ScriptValue.scalar(value).kindDescription),
        at: range)
    }
    for name in record.fieldNames where !fields.contains(name) {
      throw Diagnostic(
        .unknownField(name, in: provider.displayName, suggestion: suggestion(for: name, among: fields)),
        at: range)
    }
    return .record(Record(fields.map { ($0, record[$0] ?? .null) }))
  }

  static func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

  // MARK: Changes

  /// What a view shows now: its sections (identified by key, else title, else position) and
  /// their items (identified by the key field, else the whole value).
  func viewData(of value: ScriptValue) -> [DiffSection<Value, ViewElement>]? {
    switch value {
    case .provider(let provider):
      return viewData(of: TableAdapter(provider: provider.provider, presenter: Session.recordPresenter))
    case .table(let table):
      return viewData(of: table)
    default:
      return nil
    }
  }

  func viewData(of source: any SectionedDataSource<Value>) -> [DiffSection<Value, ViewElement>] {
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

  /// Before a statement that may change data: views shown since the last change keep what
  /// they showed as their baseline.
  func captureShownBaselines() {
    for name in shownSinceChange {
      if let binding = bindings[name] { baselines[name] = viewData(of: binding.value) }
    }
    shownSinceChange.removeAll()
  }

  /// The batch of a name's view since it was last shown, asked or reported; `nil` when there
  /// is no baseline yet.
  private func pendingChanges(of name: String) -> (Changeset<Value>, [DiffSection<Value, ViewElement>])? {
    guard let binding = bindings[name], let current = viewData(of: binding.value),
      let baseline = baselines[name]
    else { return nil }
    let changeset = SectionedDiff.changeset(
      from: baseline, to: current, id: \.id, contentEqual: { $0.item == $1.item })
    return (changeset, current)
  }

  func printChanges(of name: Identifier, json: Bool) throws {
    _ = try binding(named: name)
    if shownSinceChange.contains(name.name), let binding = bindings[name.name] {
      // Shown, and nothing changed since: what it shows is its baseline.
      baselines[name.name] = viewData(of: binding.value)
      shownSinceChange.remove(name.name)
    }
    guard let (changeset, current) = pendingChanges(of: name.name), let baseline = baselines[name.name] else {
      throw Diagnostic(.noBaseline(name.name), at: name.range)
    }
    try check(changeset, from: baseline, to: current, at: name.range)
    baselines[name.name] = current
    output.write(json ? Session.json(changeset.update) + "\n" : Session.text(changeset, of: name.name))
  }

  func watch(_ name: Identifier, on: Bool) throws {
    let binding = try binding(named: name)
    if on {
      guard let data = viewData(of: binding.value) else {
        throw Diagnostic(
          .expectedKind("a provider or a table to watch", found: binding.value.kindDescription),
          at: name.range)
      }
      if !watched.contains(name.name) { watched.append(name.name) }
      baselines[name.name] = data
      output.write("watching \(name.name)\n")
    } else {
      watched.removeAll { $0 == name.name }
      output.write("stopped watching \(name.name)\n")
    }
  }

  /// After a statement that changes data: each watched view's batch, when it has one.
  func reportWatched() {
    for name in watched {
      guard let (changeset, current) = pendingChanges(of: name), let baseline = baselines[name] else {
        continue
      }
      baselines[name] = current
      guard !changeset.update.isEmpty else { continue }
      do {
        try check(changeset, from: baseline, to: current, at: 0..<0)
        output.write(Session.text(changeset, of: name))
      } catch let diagnostic as Diagnostic {
        output.writeError("error: \(name): \(diagnostic.message.text)\n")
      } catch {}
    }
  }

  /// Every batch printed is one UIKit would accept, and applying it gives the new data.
  private func check(
    _ changeset: Changeset<Value>, from old: [DiffSection<Value, ViewElement>],
    to new: [DiffSection<Value, ViewElement>],
    at range: SourceRange
  ) throws {
    do {
      try changeset.update.validate(before: old.map(\.elements.count), after: new.map(\.elements.count))
    } catch {
      throw Diagnostic(.invalidBatch(error), at: range)
    }
  }

  static func text(_ changeset: Changeset<Value>, of name: String) -> String {
    var out =
      "\(name): "
      + (changeset.update.isEmpty
        ? "no changes"
        : changeset.update.description.replacingOccurrences(
          of: "\n", with: "\n  " + String(repeating: " ", count: name.count))) + "\n"
    if !changeset.duplicates.isEmpty {
      let keys = changeset.duplicates.map(\.literalText).sorted().joined(separator: ", ")
      out +=
        "warning: \(name) has items with the same identity (\(keys)); they are matched in order, so their moves are a best guess\n"
    }
    return out
  }

  /// The batch as JSON, in the shape `changes X as json` documents.
  static func json(_ update: BatchUpdate) -> String {
    func path(_ p: ItemPath) -> String { "[\(p.section), \(p.item)]" }
    func list(_ items: [String]) -> String { "[" + items.joined(separator: ", ") + "]" }
    return "{"
      + [
        "\"deletedSections\": " + list(update.deletedSections.map(String.init)),
        "\"insertedSections\": " + list(update.insertedSections.map(String.init)),
        "\"movedSections\": " + list(update.movedSections.map { "[\($0.from), \($0.to)]" }),
        "\"deletedRows\": " + list(update.deletedRows.map(path)),
        "\"insertedRows\": " + list(update.insertedRows.map(path)),
        "\"movedRows\": " + list(update.movedRows.map { "[\(path($0.from)), \(path($0.to))]" }),
        "\"reloadedRows\": " + list(update.reloadedRows.map(path)),
      ].joined(separator: ", ") + "}"
  }
}
