import DataSourceKit
import Foundation

// A view's first and last rows found a chunk of a file at a time, for a `show` that prints a
// few rows of a view over a file too large to be worth holding (a sort or a filter over 11M
// CSV rows held every column: 2.3 times the file).
//
// Every stage here (`where`, `sort by`, `section by`) places two rows by their own keys and
// their places in the file alone: a filter keeps a row or not, and each sort or grouping is
// stable, so of any two rows the one first in the view is the same whatever other rows there
// are. The view's first N rows are therefore among the first N of the chunk they are in, and
// the first N of those chunks' rows taken together, ordered by the same stages, are the view's.
// The same holds for its last rows. The stages are the engine's own, run over each chunk's
// columns and then over the rows kept, so the order is the order the whole file would get.

/// The rows of a table of columns held in memory, in one section: one chunk of a file read a
/// chunk at a time.
package final class ColumnTableProvider: DataProvider, RecordProviding, FieldProfiling, ColumnReadable {
  /// The rows, by column.
  package let table: ColumnTable
  private var states = LoadStateMachine()
  /// Loaded from the start: the rows are held.
  package var loadState: LoadState { states.state }
  /// Never moves: the rows never change.
  package var structureClock: StructureClock { states.clock }

  /// The rows of `table`, loaded.
  package init(_ table: ColumnTable) {
    self.table = table
    let ticket = states.begin()
    _ = states.finish(ticket, with: table.rowCount == 0 ? .noContent : .loaded)
  }

  /// Nothing to load: the rows are held.
  package func load() async throws {}
  /// One section.
  package var numberOfSections: Int { 1 }
  /// Every row.
  package func numberOfItems(inSection section: Int) -> Int { table.rowCount }
  /// A row as a record.
  package func item(at itemPath: ItemPath) -> Value { .record(table.record(at: itemPath.item)) }
  /// The header's names.
  package var knownFields: [String]? { Array(table.schema.names) }
  /// The columns' types and nulls.
  package var fieldProfiles: [FieldProfile]? { table.profiles }
  /// A column's values.
  package func fieldBatches(_ name: String) -> BatchReader? { table.fieldBatches(name) }
}

/// The first and last rows of a view made by stages over a file's rows, found from the file's
/// chunks one after another (``add(_:firstRow:)``) while holding one chunk and the rows that
/// may still be the view's, with every section's count.
package final class StreamedRows {
  /// The stages, each run over each chunk: `where`, `sort by` and `section by` only.
  private let stages: [PushdownStage]
  /// How many of the view's first rows, and of its last, are wanted.
  private let front: Int
  private let back: Int
  private let notes: ExpressionNotes?
  /// Each section's key, its rows so far, and the file's first row in it (for keys that do not
  /// order each other, which keep the order they came in).
  private var sections: [SectionKey?: (count: Int, firstRow: Int)] = [:]
  /// Rows that may be among the view's first or last, each with its row in the file.
  private var kept: [(row: Int, item: Value)] = []
  /// The header's names.
  private var fields: [String]?
  /// The columns' profiles: their types, which every chunk must share, and their nulls.
  private(set) var profiles: [FieldProfile]?
  /// The chunks read so far.
  private var chunks = 0

  /// Rows kept before they are narrowed down again to the view's first and last.
  private var keptLimit: Int { max(4 * (front + back), 1_024) }

  /// A stream for the first `front` and last `back` rows of the view `stages` make.
  ///
  /// - Parameter notes: where the stages' notes are counted (each row is computed once).
  package init(stages: [PushdownStage], front: Int, back: Int, notes: ExpressionNotes?) {
    self.stages = stages
    self.front = front
    self.back = back
    self.notes = notes
  }

  /// Whether `stage` can run a chunk at a time: a filter before any `section by` (a filter
  /// after one might leave a section empty in one chunk and not another), a sort, a section.
  package static func runsByChunks(_ stages: [PushdownStage]) -> Bool {
    var sectioned = false
    for stage in stages {
      switch stage {
      case .filter: if sectioned { return false }
      case .sort: break
      case .section: sectioned = true
      case .slice: return false
      }
    }
    return true
  }

  /// Runs the stages over one chunk's rows and keeps what may be the view's first and last.
  ///
  /// - Returns: why the stream cannot go on, or `nil`: the chunk's columns are not typed as the
  ///   first chunk's were (a text among numbers, a marker), so the whole file would type them
  ///   otherwise and the rows kept are not its rows.
  package func add(_ table: ColumnTable, firstRow: Int) async throws -> String? {
    let row = firstRow == 0 ? "" : " past row \(ValueFormat.grouped(String(firstRow)))"
    if let name = table.markers.keys.sorted().first, let found = table.markers[name] {
      return "\(name) holds \(found.map { "\"\($0.text)\"" }.joined(separator: ", ")) among its values\(row)"
    }
    if let name = table.textReasons.keys.sorted().first { return "\(name) is text\(row)" }
    let chunkProfiles = table.profiles
    if var profiles {
      for (c, profile) in chunkProfiles.enumerated() {
        // A chunk whose column holds only nulls fits any type.
        if let type = profile.type, type != profiles[c].type {
          let was = profiles[c].type.map { "\($0.rawValue)" } ?? "empty"
          return "\(profile.name) is \(was) in the first rows and \(type.rawValue)\(row)"
        }
        profiles[c].nulls = (profiles[c].nulls ?? 0) + (profile.nulls ?? 0)
      }
      self.profiles = profiles
    } else {
      profiles = chunkProfiles
      fields = Array(table.schema.names)
    }
    chunks += 1
    let view = try await arranged(ColumnTableProvider(table), notes: notes)
    let offsets = SectionOffsets(of: view.provider)
    var flat = 0
    for section in 0..<view.provider.numberOfSections {
      let count = view.provider.numberOfItems(inSection: section)
      let first = (flat..<flat + count).lazy.map { view.positions[$0] }.min().map { $0 + firstRow } ?? Int.max
      let key = view.provider.sectionKey(section)
      let known = sections[key] ?? (0, Int.max)
      sections[key] = (known.count + count, min(known.firstRow, first))
      flat += count
    }
    for flat in Self.ends(total: offsets.total, front: front, back: back) {
      kept.append((firstRow + view.positions[flat], view.provider.item(at: offsets.itemPath(forFlat: flat))))
    }
    if kept.count > keptLimit { try await narrow() }
    return nil
  }

  /// The view: every section with its count, and the first and last rows found.
  package func view() async throws -> StreamedView {
    try await narrow()
    var ordered = sections.sorted { $0.value.firstRow < $1.value.firstRow }.map {
      DerivedSection(key: $0.key, baseIndices: [$0.value.count])
    }
    if let direction = sectionDirection {
      ordered = try DerivedProvider<Value>.orderedByKey(ordered, direction: direction)
    }
    let counts = ordered.map { (key: $0.key, count: $0.baseIndices[0]) }
    let total = counts.reduce(0) { $0 + $1.count }
    let wanted = Self.ends(total: total, front: front, back: back)
    // `kept` is in the view's order, its first and last rows.
    let rows = Dictionary(uniqueKeysWithValues: zip(wanted, kept.map(\.item)))
    return StreamedView(sections: counts, rows: rows, fields: fields, profiles: profiles, chunks: chunks)
  }

  /// The direction of the last `section by`, or `nil` without one.
  private var sectionDirection: SortDirection? {
    stages.reversed().lazy.compactMap { stage -> SortDirection? in
      if case .section(let term) = stage { return term.direction }
      return nil
    }.first
  }

  /// Orders the rows kept by the stages again and keeps only the view's first and last of them.
  private func narrow() async throws {
    kept.sort { $0.row < $1.row }
    let view = try await arranged(ArrayProvider(kept.map(\.item), knownFields: fields), notes: nil)
    let total = SectionOffsets(of: view.provider).total
    kept = Self.ends(total: total, front: front, back: back).map { kept[view.positions[$0]] }
  }

  /// The stages run over `source`, and the source's position of each row of the result.
  private func arranged(_ source: any DataProvider<Value>, notes: ExpressionNotes?) async throws
    -> (provider: any DataProvider<Value>, positions: [Int])
  {
    var provider = source
    for stage in stages {
      let derived = DerivedProvider<Value>.stage(stage, over: provider, label: "", notes: notes)
      // Each stage arranged once, over a base arranged already: loading the last would load
      // the ones below, each telling the stages over it to arrange again.
      try await derived.load()
      provider = derived
    }
    guard let derived = provider as? DerivedProvider<Value> else {
      return (provider, Array(0..<SectionOffsets(of: provider).total))
    }
    return (derived, derived.rootFlatPositions)
  }

  /// The flat positions of the first `front` and last `back` of `total` rows, in order.
  private static func ends(total: Int, front: Int, back: Int) -> [Int] {
    let head = min(front, total)
    return Array(0..<head) + Array(max(head, total - back)..<total)
  }
}

/// A view of a file's rows of which only its first and last rows are held, with every
/// section's count (``StreamedRows``): what a `show` of a few rows prints.
package final class StreamedView: DataProvider, RecordProviding, FieldProfiling, CompositionNode {
  private let sections: [(key: SectionKey?, count: Int)]
  private let starts: SectionOffsets
  private let rows: [Int: Value]
  package let knownFields: [String]?
  /// The columns' types as the whole file has them.
  package let fieldProfiles: [FieldProfile]?
  private var states = LoadStateMachine()
  /// Loaded: what it holds was found when it was made.
  package var loadState: LoadState { states.state }
  /// Never moves.
  package var structureClock: StructureClock { states.clock }

  /// How many chunks of the file were read, one after another.
  package let chunks: Int

  init(
    sections: [(key: SectionKey?, count: Int)], rows: [Int: Value], fields: [String]?,
    profiles: [FieldProfile]?, chunks: Int
  ) {
    self.chunks = chunks
    self.sections = sections
    starts = SectionOffsets(counts: sections.map(\.count))
    self.rows = rows
    knownFields = fields
    fieldProfiles = profiles
    let ticket = states.begin()
    _ = states.finish(ticket, with: starts.total == 0 ? .noContent : .loaded)
  }

  /// The rows it holds: the view's first and last.
  package var heldRows: Set<Int> { Set(rows.keys) }
  /// Nothing to load.
  package func load() async throws {}
  /// Every section of the view.
  package var numberOfSections: Int { sections.count }
  /// A section's rows, counted.
  package func numberOfItems(inSection section: Int) -> Int { sections[section].count }
  /// The section's key.
  package func sectionKey(_ section: Int) -> SectionKey? { sections[section].key }
  /// A row the view holds; null for one it does not (which no caller asks for).
  package func item(at itemPath: ItemPath) -> Value { rows[starts.flatIndex(of: itemPath)] ?? .null }

  /// How `describe` names it: the file's rows, streamed.
  package var nodeTitle: String { "the file streamed a chunk at a time" }
  /// Its counts, and what it read and kept.
  package var nodeDetail: String? {
    countsDetail
      + "; \(chunks) chunk\(chunks == 1 ? "" : "s") read, \(rows.count) row\(rows.count == 1 ? "" : "s") kept"
  }
}
