import DataSourceKit

/// The aggregates a header's or footer's template computes over each section's items, and a
/// title's or caption's over the whole view.
///
/// A section's values are worked out when its line is first asked for (a view asks only for the
/// sections it shows) and kept until the source's data changes: every change advances its
/// ``StructureClock``, so an edit's batch sees the new totals and reloads the lines they change.
package final class SectionAggregates {
  private let aggregates: [Aggregate]
  private let accumulator: AggregateAccumulator
  private let notes: ExpressionNotes?
  /// The provider whose items the sections hold, section for section, when it reads its fields
  /// by column: the arguments are then computed a batch of rows at a time, no record per row.
  private let columns: (any DataProvider<Value> & ColumnReadable)?
  private var bySection: [Int: [Value]] = [:]
  private var whole: [Value]?
  private var epoch: UInt64?

  package init(
    _ aggregates: [Aggregate], notes: ExpressionNotes?,
    columns: (any DataProvider<Value> & ColumnReadable)? = nil
  ) {
    self.aggregates = aggregates
    accumulator = AggregateAccumulator(aggregates, notes: notes)
    self.notes = notes
    self.columns = columns
  }

  /// The aggregates over the items of one section of `source`.
  package func values(inSection section: Int, of source: any SectionedDataSource<Value, TableCell>) -> [Value]
  {
    forgetIfChanged(source)
    if let kept = bySection[section] { return kept }
    var accumulator = accumulator.empty
    let count = source.numberOfRows(inSection: section)
    if !addByColumns(section: section, count: count, to: &accumulator) {
      for row in 0..<count {
        accumulator.add(source.item(at: ItemPath(item: row, section: section)))
      }
    }
    let values = accumulator.results
    // Rows an interrupted read gave as nulls (^C in browse) are not the section's: not kept.
    if ReadInterruption.current?.isInterrupted != true { bySection[section] = values }
    return values
  }

  /// Adds a section's items from the provider's columns; `false` when it has none to read (or
  /// its sections are not the view's).
  private func addByColumns(section: Int, count: Int, to accumulator: inout AggregateAccumulator) -> Bool {
    guard let columns, section < columns.numberOfSections, columns.numberOfItems(inSection: section) == count
    else { return false }
    var readers: [BatchReader?] = []
    for aggregate in aggregates {
      guard let argument = aggregate.argument else {
        readers.append(nil)
        continue
      }
      guard let reader = argument.batches(over: columns, notes: notes) else { return false }
      readers.append(reader)
    }
    let start = (0..<section).reduce(0) { $0 + columns.numberOfItems(inSection: $1) }
    var positions = [Int](repeating: 0, count: 1024)
    var done = 0
    while done < count {
      let n = min(positions.count, count - done)
      for k in 0..<n { positions[k] = start + done + k }
      let batches = positions.withUnsafeBufferPointer { buffer in
        let batch = UnsafeBufferPointer(rebasing: buffer[0..<n])
        return readers.map { $0?(batch) }
      }
      for row in 0..<n { accumulator.add { batches[$0]?[row] ?? .null } }
      done += n
    }
    return true
  }

  /// The aggregates over every item of `source`.
  package func values(of source: any SectionedDataSource<Value, TableCell>) -> [Value] {
    forgetIfChanged(source)
    if let whole { return whole }
    var accumulator = accumulator.empty
    for section in 0..<source.numberOfSections {
      for row in 0..<source.numberOfRows(inSection: section) {
        accumulator.add(source.item(at: ItemPath(item: row, section: section)))
      }
    }
    let values = accumulator.results
    if ReadInterruption.current?.isInterrupted != true { whole = values }
    return values
  }

  private func forgetIfChanged(_ source: any SectionedDataSource<Value, TableCell>) {
    let now = source.structureClock.current
    if epoch != now {
      bySection = [:]
      whole = nil
      epoch = now
    }
  }
}
