/// The aggregates a header's or footer's template computes over each section's items, and a
/// title's or caption's over the whole view.
///
/// A section's values are worked out when its line is first asked for (a view asks only for the
/// sections it shows) and kept until any data changes: every change advances
/// ``StructureEpoch``, so an edit's batch sees the new totals and reloads the lines they change.
public final class SectionAggregates {
  private let accumulator: AggregateAccumulator
  private var bySection: [Int: [Value]] = [:]
  private var whole: [Value]?
  private var epoch: UInt64?

  public init(_ aggregates: [Aggregate], notes: ExpressionNotes?) {
    accumulator = AggregateAccumulator(aggregates, notes: notes)
  }

  /// The aggregates over the items of one section of `source`.
  public func values(inSection section: Int, of source: any SectionedDataSource<Value>) -> [Value] {
    forgetIfChanged()
    if let kept = bySection[section] { return kept }
    var accumulator = accumulator.empty
    for row in 0..<source.numberOfRows(inSection: section) {
      accumulator.add(source.item(at: ItemPath(item: row, section: section)))
    }
    let values = accumulator.results
    bySection[section] = values
    return values
  }

  /// The aggregates over every item of `source`.
  public func values(of source: any SectionedDataSource<Value>) -> [Value] {
    forgetIfChanged()
    if let whole { return whole }
    var accumulator = accumulator.empty
    for section in 0..<source.numberOfSections {
      for row in 0..<source.numberOfRows(inSection: section) {
        accumulator.add(source.item(at: ItemPath(item: row, section: section)))
      }
    }
    let values = accumulator.results
    whole = values
    return values
  }

  private func forgetIfChanged() {
    let now = StructureEpoch.current
    if epoch != now {
      bySection = [:]
      whole = nil
      epoch = now
    }
  }
}
