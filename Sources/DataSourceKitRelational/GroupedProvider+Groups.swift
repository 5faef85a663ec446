import DataSourceKit
import DataSourceKitValues
import Synchronization

// The groups a group by finds, and how the groups of blocks grouped on several cores are merged
// in the blocks' order.

extension GroupedProvider {
  /// The groups found so far: their keys in first-seen order and their aggregates.
  struct Groups {
    let prototype: AggregateAccumulator
    var table = KeyTable()
    var accumulators: [AggregateAccumulator] = []

    init(prototype: AggregateAccumulator) { self.prototype = prototype }

    var keys: [[Value]] { table.keys }

    /// Adds the groups of items that came after these, in their first-seen order.
    mutating func merge(_ later: Groups) {
      let laterKeys = later.table.keys
      for index in laterKeys.indices {
        let (group, isNew) = table.entry(laterKeys[index])
        if isNew { accumulators.append(prototype.empty) }
        accumulators[group].merge(later.accumulators[index])
      }
    }

    /// Adds an item to the group of `key`, through `add`.
    mutating func add(key: [Value], _ add: (inout AggregateAccumulator) -> Void) {
      let (group, isNew) = table.entry(key)
      if isNew { accumulators.append(prototype.empty) }
      add(&accumulators[group])
    }
  }

  /// Blocks' groups merged in the blocks' order as they are made, whatever core makes them: a
  /// block done before those ahead of it waits for them, so few are held at once (a group by of
  /// many groups a block would otherwise hold every block's until the last).
  ///
  /// `@unchecked Sendable`: every field is read and written under `lock`.
  final class BlockMerger: @unchecked Sendable {
    private let lock = Mutex(())
    private var groups: Groups
    private let types: [ValueType?]
    private var next = 0
    private var waiting: [Int: RunGroups] = [:]
    private var failure: DataSourceError?

    init(_ groups: Groups, types: [ValueType?]) {
      self.groups = groups
      self.types = types
    }

    /// Block `index`'s groups, or why they could not be made; merged with those before it once
    /// they are.
    func add(_ part: Result<RunGroups, DataSourceError>, at index: Int) {
      lock.withLock { _ in
        guard failure == nil else { return }
        switch part {
        case .failure(let error):
          failure = error
          waiting = [:]
        case .success(let made):
          waiting[index] = made
          while let ready = waiting.removeValue(forKey: next) {
            guard ready.types == types else {
              failure = .sourceFailed(message: "a block's columns changed type")
              waiting = [:]
              return
            }
            groups.merge(ready.groups)
            next += 1
          }
        }
      }
    }

    /// The groups of all `count` blocks, merged.
    func merged(count: Int) throws(DataSourceError) -> Groups {
      try lock.withLock { _ throws(DataSourceError) in
        if let failure { throw failure }
        guard next == count else { throw DataSourceError.cancelled }
        return groups
      }
    }
  }

  /// The groups of one block, made on its own core, and the types of the columns they read.
  ///
  /// `@unchecked Sendable`: made by one thread and then handed, whole, to the one that merges it;
  /// never shared.
  final class RunGroups: @unchecked Sendable {
    let groups: Groups
    let types: [ValueType?]
    init(groups: Groups, types: [ValueType?]) {
      self.groups = groups
      self.types = types
    }
  }
}
