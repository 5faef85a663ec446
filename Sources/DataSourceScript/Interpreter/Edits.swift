import DataSourceKit
import DataSourceKitValues

extension Session {
  // MARK: Edits

  /// The most items an edit copies: 10 million values take about 400 MB.
  static let editableItemLimit = 10_000_000

  /// Inserts, deletes, updates or moves items of an editable provider.
  ///
  /// The new items are worked out first, so a statement that fails changes nothing.
  ///
  /// One case per edit (insert, delete, update, move), each checked against the same target.
  func apply(_ edit: Edit, to target: Identifier) throws {
    let binding = try bindings.binding(named: target)
    guard case .provider(var provider) = binding.value,
      let editable = provider.provider as? any EditableItems<Value>
    else {
      if case .provider(let provider) = binding.value, let store = provider.provider as? any ReadOnlyStore {
        throw Diagnostic(.readOnly(target.name, store: store.storeDescription), at: target.range)
      }
      let found =
        if case .provider = binding.value { "a derived provider" } else { binding.value.kindDescription }
      throw Diagnostic(.notEditable(target.name, found: found), at: target.range)
    }
    provider.displayName = target.name
    // The first edit copies the items: a range of trillions (or any source too big to copy)
    // is refused before one item is made.
    let count = (0..<editable.numberOfSections).reduce(0) { $0 + editable.numberOfItems(inSection: $1) }
    if count > Session.editableItemLimit {
      throw Diagnostic(
        .tooLargeToEdit(target.name, count: count, limit: Session.editableItemLimit), at: target.range)
    }
    let message: String
    /// The item at a flat position.
    let offsets = SectionOffsets(of: editable)
    func item(_ position: Int) -> Value { editable.item(at: offsets.itemPath(forFlat: position)) }
    /// The positions of the items a predicate holds for, read from columns where it can be.
    func matching(_ predicate: ValueExpression) throws -> [Int] {
      let expression = try evaluator.checker(for: provider).checkTest(predicate).expression
      // `where KEY == value` on the identity key: found in the key index, not by a scan.
      if let editable = editable as? EditableProvider<Value>, let (field, value) = expression.keyEquality,
        field == editable.identityKey, let positions = editable.positions(withKey: value)
      {
        return positions
      }
      do {
        return try expression.positionsWhereTrue(in: editable, notes: notes.collector)
      } catch {
        throw Diagnostic(.interrupted, at: predicate.range)
      }
    }
    switch edit {
    case .insert(let value, let valueRange, let at, let atRange):
      let item = try conform(value, to: provider, at: valueRange)
      let position = at ?? count
      guard (0...count).contains(position) else {
        throw Diagnostic(
          .positionOutside(position, count: count, what: target.name), at: atRange ?? target.range)
      }
      editable.insert(item, at: position)
      message = "inserted 1 item into \(target.name) at \(position)"
    case .delete(let predicate, let at, let atRange):
      if let predicate {
        let positions = try matching(predicate)
        editable.remove(at: positions)
        message = "deleted \(Session.plural(positions.count, "item")) from \(target.name)"
      } else {
        let position = at ?? 0
        guard (0..<count).contains(position) else {
          throw Diagnostic(
            .positionOutside(position, count: count, what: target.name), at: atRange ?? target.range)
        }
        editable.remove(at: [position])
        message = "deleted item \(position) from \(target.name)"
      }
    case .update(let assignments, let predicate):
      let evaluator = self.evaluator
      if let plain = Evaluator.plainItemType(of: editable, limit: nil) {
        throw Diagnostic(.notARecord(target.name, found: plain), at: assignments[0].field.range)
      }
      let positions = try predicate.map(matching) ?? Array(0..<count)
      let checker = try evaluator.checker(for: provider)
      let profiles = Dictionary(
        try scans.profiles(of: editable).map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
      var computed: [(name: String, range: SourceRange, held: ValueType?, value: CompiledExpression)] = []
      for assignment in assignments {
        try evaluator.checkField(
          FieldPath(components: [assignment.field.name], range: assignment.field.range), in: provider)
        let typed = try checker.check(assignment.value)
        let held = profiles[assignment.field.name]?.type
        try checkType(typed.type, written: assignment.value, for: assignment.field, holds: held)
        computed.append(
          (
            assignment.field.name, assignment.field.range, held,
            typed.expression.compiled(notes: notes.collector)
          ))
      }
      // Every new item is worked out before any is written, so a failure changes nothing.
      var replacements: [(position: Int, item: Value)] = []
      replacements.reserveCapacity(positions.count)
      for position in positions {
        let old = item(position)
        guard case .record(let record) = old else {
          throw Diagnostic(.notARecord(target.name, found: old.typeName), at: assignments[0].field.range)
        }
        // Every assignment reads the item as it was (as SQL's UPDATE does).
        var pairs = record.fields.map { ($0.name, $0.value) }
        for assignment in computed {
          var value = assignment.value(old)
          // A number written into a double field is a double; a value of another type than the
          // field holds (known only now, for a schemaless source) is refused.
          if assignment.held == .double, case .int(let i) = value { value = .double(Double(i)) }
          if let held = assignment.held, !value.isNull, value.type != held {
            throw Diagnostic(
              .typeMismatch(
                field: assignment.name, holds: held.rawValue, value: value.literalText, type: value.typeName),
              at: assignment.range)
          }
          if let index = pairs.firstIndex(where: { $0.0 == assignment.name }) {
            pairs[index].1 = value
          } else {
            pairs.append((assignment.name, value))
          }
        }
        replacements.append(
          (
            position,
            .record(
              record.fieldNames.elementsEqual(pairs.map(\.0))
                ? Record(schema: record.schema, values: pairs.map(\.1)) : Record(pairs))
          ))
      }
      // An item written with the values it had is no change (same types: 1 and 1.0 differ).
      editable.replace(replacements, isEqual: Session.sameValue)
      message = "updated \(Session.plural(positions.count, "item")) of \(target.name)"
    case .move(let from, let to, let range):
      guard (0..<count).contains(from) else {
        throw Diagnostic(.positionOutside(from, count: count, what: target.name), at: range)
      }
      guard (0..<count).contains(to) else {
        throw Diagnostic(.positionOutside(to, count: count, what: target.name), at: range)
      }
      editable.move(from: from, to: to)
      message = "moved item \(from) of \(target.name) to \(to)"
    }
    output.write(message + "\n")
  }

  /// A value ready to insert: a record in the provider's field order (missing fields null),
  /// its fields checked against the provider's.
  private func conform(_ value: Value, to provider: ProviderValue, at range: SourceRange) throws -> Value {
    guard let fields = provider.provider.recordFields else { return value }
    guard case .record(let record) = value else {
      throw Diagnostic(
        .expectedKind(
          .recordWithFields(of: provider.displayName), found: ScriptValue.scalar(value).kindDescription),
        at: range)
    }
    for name in record.fieldNames where !fields.contains(name) {
      throw Diagnostic(Evaluator.unknownField(name, named: name, in: provider, known: fields), at: range)
    }
    let profiles = Dictionary(
      try scans.profiles(of: provider.provider).map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    let values = try fields.map { name -> (String, Value) in
      var value = record[name] ?? .null
      guard let held = profiles[name]?.type, !value.isNull else { return (name, value) }
      if held == .double, case .int(let i) = value { value = .double(Double(i)) }
      // Dates and timestamps are written as ISO text in a literal.
      if held == .date || held == .timestamp, case .string(let text) = value,
        let parsed = DeclaredType(held).read(text)
      {
        value = parsed
      }
      guard value.type == held else {
        throw Diagnostic(
          .typeMismatch(field: name, holds: held.rawValue, value: value.literalText, type: value.typeName),
          at: range)
      }
      return (name, value)
    }
    return .record(Record(values))
  }

  /// A value set into a field must be of the type the field holds (an int may go into a double
  /// field, null into any), or the column would silently mix types.
  private func checkType(
    _ type: ValueType?, written: ValueExpression, for field: Identifier, holds held: ValueType?
  )
    throws
  {
    guard let type, let held, type != .null, type != held, !(type == .int && held == .double) else { return }
    throw Diagnostic(
      .typeMismatch(field: field.name, holds: held.rawValue, value: text(written.range), type: type.rawValue),
      at: written.range)
  }

  /// Whether two values are the same value of the same types (`1` and `1.0` are equal, not the
  /// same: a view shows them differently).
  static func sameValue(_ a: Value, _ b: Value) -> Bool { a == b && a.literalText == b.literalText }

  static func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

  // MARK: Changes

  /// `changes X [as json]`: the batch of X's view since it was last shown or asked.
  func printChanges(of name: Identifier, json: Bool) throws {
    let binding = try bindings.binding(named: name)
    let changeset: SectionedDiff.Result<Value>?
    do {
      changeset = try changes.takeChanges(of: name.name, value: binding.value)
    } catch let error as BatchUpdateError {
      throw Diagnostic(.invalidBatch(error), at: name.range)
    } catch let error as ViewTooLargeToDiff {
      throw Diagnostic(
        .viewTooLargeToDiff(name.name, rows: error.rows, limit: ChangeTracker.maximumDiffedRows),
        at: name.range)
    } catch {
      throw Diagnostic(.interrupted, at: name.range)
    }
    guard let changeset else { throw Diagnostic(.noBaseline(name.name), at: name.range) }
    output.write(json ? Session.json(changeset.update) + "\n" : Session.text(changeset, of: name.name))
  }

  /// `watch X` / `unwatch X`.
  func watch(_ name: Identifier, on: Bool) throws {
    let binding = try bindings.binding(named: name)
    if on {
      let watching: Bool
      do {
        watching = try changes.watch(name.name, value: binding.value)
      } catch let error as ViewTooLargeToDiff {
        throw Diagnostic(
          .viewTooLargeToDiff(name.name, rows: error.rows, limit: ChangeTracker.maximumDiffedRows),
          at: name.range)
      } catch {
        throw Diagnostic(.interrupted, at: name.range)
      }
      guard watching else {
        throw Diagnostic(.expectedKind(.watchable, found: binding.value.kindDescription), at: name.range)
      }
      output.write("watching \(name.name)\n")
    } else {
      changes.unwatch(name.name)
      output.write("stopped watching \(name.name)\n")
    }
  }

  /// After a statement that changed `changing` (`nil`: anything): the batch of each watched
  /// view built on it, when it has one.
  func reportWatched(changing: Set<ObjectIdentifier>?) {
    for name in changes.watched {
      guard let binding = bindings[name], ChangeTracker.depends(binding.value, on: changing) else { continue }
      do {
        guard let changeset = try changes.takeChanges(of: name, value: binding.value),
          !changeset.update.isEmpty
        else { continue }
        output.write(Session.text(changeset, of: name))
      } catch let error as BatchUpdateError {
        sayError("error: \(name): \(DiagnosticMessage.invalidBatch(error).text)\n")
      } catch let error as ViewTooLargeToDiff {
        let message = DiagnosticMessage.viewTooLargeToDiff(
          name, rows: error.rows, limit: ChangeTracker.maximumDiffedRows)
        sayError("error: \(name): \(message.text)\n")
      } catch {
        // ^C while the batches were worked out: the statement is done, its reports are not.
        output.writeError("error: \(name): \(DiagnosticMessage.interrupted.text)\n")
        return
      }
    }
  }

  static func text(_ changeset: SectionedDiff.Result<Value>, of name: String) -> String {
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
        "\"reloadedAfterMoves\": " + list(update.reloadedAfterMoves.map(path)),
        "\"reloadedHeaders\": " + list(update.reloadedHeaders.map(String.init)),
        "\"reloadedFooters\": " + list(update.reloadedFooters.map(String.init)),
        "\"reloadedPlaceholders\": " + list(update.reloadedPlaceholders.map(String.init)),
      ].joined(separator: ", ") + "}"
  }
}

extension Session {
  // MARK: Check

  /// `check "PATH" before [..] after [..]` / `check "PATH" against NAME`: whether UIKit accepts
  /// the batch in the file; when not, UIKit's reason, the operation at fault and a batch it
  /// accepts.
  func checkBatch(in path: String, pathRange: SourceRange, counts: BatchCounts) throws {
    let resolved = resolve(path)
    if let sandbox = environment.sandbox, !sandbox.allowsReading(resolved) {
      throw Diagnostic(.refusedBySafeMode(.reading(path: path)), at: pathRange)
    }
    let text: String
    do {
      // The path is checked above for the message; the file opened, on its descriptor.
      text = try RegularFile.readText(
        atPath: resolved, displayPath: path, access: environment.sandbox?.fileAccess)
    } catch let error as DataSourceError {
      throw Diagnostic(.dataSource(error), at: pathRange)
    }
    let batch: BatchUpdate
    do {
      batch = try BatchUpdate(parsing: text)
    } catch {
      throw Diagnostic(.unreadableBatch(path: path, error), at: pathRange)
    }
    let (before, after): ([Int], [Int])
    var note = ""
    switch counts {
    case .given(let given, let now):
      if let negative = (given + now).first(where: { $0 < 0 }) {
        throw Diagnostic(.negativeRowCount(negative), at: pathRange)
      }
      (before, after) = (given, now)
    case .against(let name):
      let binding = try bindings.binding(named: name)
      guard let current = ChangeTracker.sectionCounts(of: binding.value) else {
        throw Diagnostic(
          .expectedKind(.checkable, found: binding.value.kindDescription), at: name.range)
      }
      after = current
      if let baseline = changes.baselineCounts(of: name.name) {
        before = baseline
      } else {
        before = current
        note = " (\(name.name) has not changed since it was last shown)"
      }
    }
    let json = text.first(where: { !$0.isWhitespace }) == "{"
    func written(_ list: [Int]) -> String { "[" + list.map(String.init).joined(separator: ", ") + "]" }
    let header = "\(path): rows per section \(written(before)) before, \(written(after)) after\(note)"
    do {
      try batch.validate(before: before, after: after)
      output.write("\(header)\nUIKit accepts this batch\n")
    } catch {
      var lines = [header, "UIKit refuses this batch (NSInternalInconsistencyException):"]
      if let reason = error.uikitReason {
        lines.append("  reason: \(reason)")
      } else {
        lines.append(
          "  reason: \(error.description)"
            + (error.concernsRow ? " (UIKit's own message names the index path object by its address)" : ""))
      }
      lines.append("  at fault: " + error.operationAtFault(in: batch, before: before, after: after))
      if let corrected = batch.corrected(before: before, after: after) {
        lines.append("a batch UIKit accepts:")
        let form = json ? Session.json(corrected) : corrected.description
        lines += form.split(separator: "\n").map { "  " + $0 }
      }
      output.write(lines.joined(separator: "\n") + "\n")
      // A refused batch is a failure, as every other failed statement: a script exits 1.
      throw AlreadyReported()
    }
  }
}
