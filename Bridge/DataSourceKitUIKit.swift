import DataSourceKit
import Foundation

// DataSourceKit in a UIKit app: a table view's and a collection view's data source over any
// SectionedDataSource, cells dequeued by the presenters' reuse identifiers, and each snapshot
// applied as the batch the headless ListView works out, with performBatchUpdates, then
// reconfigured rows and refreshed headers. Add this file to the app target (it is not part of
// the library, so an app may change it); on Linux the package compiles it in CI against
// Sources/UIKitStandIn, UIKit's signatures without UIKit.
#if canImport(UIKit)
  import UIKit
#else
  import UIKitStandIn
#endif

/// Shows a data source in a table view, and each snapshot of it as one batch of updates.
///
/// ```swift
/// let bridge = TableViewBridge(tableView: tableView, source: inbox)
/// try bridge.apply(DataSourceSnapshot(of: inbox))  // the first: reloadData()
/// messages.insert(message, at: 0)
/// try bridge.apply(DataSourceSnapshot(of: inbox))  // a batch: insertRows
/// ```
///
/// The table's counts are the snapshot it last applied (``ListView/shownCounts``), as a table
/// view requires while it animates a batch; its cells come from the data source, each presenter
/// naming the kind, which the table must have registered. A cell class conforms to
/// ``ReusableCell`` on the main actor: `extension MessageCell: @MainActor ReusableCell {}`.
@MainActor
public final class TableViewBridge<Item, Cell: UITableViewCell & ReusableCell>: NSObject,
  UITableViewDataSource
{
  /// The table shown in.
  public let tableView: UITableView
  /// What the table shows.
  public let source: any SectionedDataSource<Item, Cell>
  /// The headless view that keeps what the table shows and works out each batch.
  public let view: ListView<Item, Cell>
  /// How rows and sections come and go.
  public var animation: UITableView.RowAnimation = .automatic

  /// Makes itself `tableView`'s data source, showing `source`.
  public init(tableView: UITableView, source: any SectionedDataSource<Item, Cell>) {
    self.tableView = tableView
    self.source = source
    view = ListView(dataSource: source)
    super.init()
    tableView.dataSource = self
  }

  /// Shows `snapshot`, and returns its batch.
  ///
  /// The first is a `reloadData()`, each later one the batch from the one shown before.
  ///
  /// - Throws: ``SnapshotError`` when the snapshot is not of the source as it is now; the table
  ///   keeps showing what it showed.
  @discardableResult
  public func apply<S, I>(_ snapshot: DataSourceSnapshot<S, I>) throws(SnapshotError) -> BatchUpdate {
    let first = view.shownSnapshot(as: DataSourceSnapshot<S, I>.self) == nil
    let batch = try view.apply(snapshot)
    if first { tableView.reloadData() } else { perform(batch) }
    return batch
  }

  /// Applies a batch the view worked out (``ListView/apply(_:)`` or
  /// ``ListView/apply(_:batch:from:)``) as UIKit takes it: one `performBatchUpdates`, then the
  /// rows that moved and changed reconfigured where the batch put them, then the sections whose
  /// header, footer or placeholder changed reloaded (a table view refreshes no title on its own).
  public func perform(_ batch: BatchUpdate) {
    guard !batch.isEmpty else { return }
    func paths(_ paths: [ItemPath]) -> [IndexPath] {
      paths.map { IndexPath(row: $0.item, section: $0.section) }
    }
    // UIKit's order inside one batch does not matter: deletes and reloads are by old places,
    // inserts by new ones, moves from one to the other.
    let (table, animation) = (tableView, self.animation)
    table.performBatchUpdates {
      table.deleteSections(IndexSet(batch.deletedSections), with: animation)
      table.insertSections(IndexSet(batch.insertedSections), with: animation)
      for move in batch.movedSections { table.moveSection(move.from, toSection: move.to) }
      table.deleteRows(at: paths(batch.deletedRows), with: animation)
      table.insertRows(at: paths(batch.insertedRows), with: animation)
      for move in batch.movedRows {
        table.moveRow(
          at: IndexPath(row: move.from.item, section: move.from.section),
          to: IndexPath(row: move.to.item, section: move.to.section))
      }
      table.reloadRows(at: paths(batch.reloadedRows), with: .none)
    }
    if !batch.reloadedAfterMoves.isEmpty { tableView.reconfigureRows(at: paths(batch.reloadedAfterMoves)) }
    let titled = IndexSet(batch.reloadedHeaders + batch.reloadedFooters + batch.reloadedPlaceholders)
    if !titled.isEmpty { tableView.reloadSections(titled, with: .none) }
  }

  /// The sections the table shows.
  public func numberOfSections(in tableView: UITableView) -> Int { view.shownCounts.count }

  /// The rows of a section the table shows.
  public func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int {
    view.shownCounts[section]
  }

  /// A row's cell: dequeued by the kind its presenter names, and filled.
  public func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell {
    let dequeuer = TableCellDequeuer<Cell>(tableView: tableView, indexPath: indexPath)
    return source.cell(at: ItemPath(item: indexPath.row, section: indexPath.section), in: dequeuer).cell
  }

  /// A section's headers, one a line.
  public func tableView(_ tableView: UITableView, titleForHeaderInSection section: Int) -> String? {
    Self.title(source.supplements(.header, inSection: section))
  }

  /// A section's footers and placeholder, one a line.
  public func tableView(_ tableView: UITableView, titleForFooterInSection section: Int) -> String? {
    Self.title(
      source.supplements(.placeholder, inSection: section) + source.supplements(.footer, inSection: section))
  }

  private static func title(_ supplements: [Supplement]) -> String? {
    supplements.isEmpty ? nil : supplements.map(\.text).joined(separator: "\n")
  }
}

/// Shows a data source in a collection view, and each snapshot of it as one batch of updates,
/// as ``TableViewBridge`` does for a table; supplementary views are the app's
/// (`supplementaryViewProvider` of its own, reading ``SectionedDataSource/supplements(_:inSection:)``).
@MainActor
public final class CollectionViewBridge<Item, Cell: UICollectionViewCell & ReusableCell>: NSObject,
  UICollectionViewDataSource
{
  /// The collection shown in.
  public let collectionView: UICollectionView
  /// What the collection shows.
  public let source: any SectionedDataSource<Item, Cell>
  /// The headless view that keeps what the collection shows and works out each batch.
  public let view: ListView<Item, Cell>
  /// Called with the sections whose header, footer or placeholder changed, after a batch: a
  /// collection view's supplementary views are the app's to refresh.
  public var supplementsChanged: (IndexSet) -> Void = { _ in }

  /// Makes itself `collectionView`'s data source, showing `source`.
  public init(collectionView: UICollectionView, source: any SectionedDataSource<Item, Cell>) {
    self.collectionView = collectionView
    self.source = source
    view = ListView(dataSource: source)
    super.init()
    collectionView.dataSource = self
  }

  /// Shows `snapshot`, and returns its batch.
  ///
  /// The first is a `reloadData()`, each later one the batch from the one shown before.
  @discardableResult
  public func apply<S, I>(_ snapshot: DataSourceSnapshot<S, I>) throws(SnapshotError) -> BatchUpdate {
    let first = view.shownSnapshot(as: DataSourceSnapshot<S, I>.self) == nil
    let batch = try view.apply(snapshot)
    if first { collectionView.reloadData() } else { perform(batch) }
    return batch
  }

  /// Applies a batch as UIKit takes it: one `performBatchUpdates`, then the items that moved and
  /// changed reconfigured where the batch put them, then ``supplementsChanged``.
  public func perform(_ batch: BatchUpdate) {
    guard !batch.isEmpty else { return }
    func paths(_ paths: [ItemPath]) -> [IndexPath] {
      paths.map { IndexPath(item: $0.item, section: $0.section) }
    }
    let collection = collectionView
    collection.performBatchUpdates {
      collection.deleteSections(IndexSet(batch.deletedSections))
      collection.insertSections(IndexSet(batch.insertedSections))
      for move in batch.movedSections { collection.moveSection(move.from, toSection: move.to) }
      collection.deleteItems(at: paths(batch.deletedRows))
      collection.insertItems(at: paths(batch.insertedRows))
      for move in batch.movedRows {
        collection.moveItem(
          at: IndexPath(item: move.from.item, section: move.from.section),
          to: IndexPath(item: move.to.item, section: move.to.section))
      }
      collection.reloadItems(at: paths(batch.reloadedRows))
    }
    if !batch.reloadedAfterMoves.isEmpty {
      collectionView.reconfigureItems(at: paths(batch.reloadedAfterMoves))
    }
    let changed = IndexSet(batch.reloadedHeaders + batch.reloadedFooters + batch.reloadedPlaceholders)
    if !changed.isEmpty { supplementsChanged(changed) }
  }

  /// The sections the collection shows.
  public func numberOfSections(in collectionView: UICollectionView) -> Int { view.shownCounts.count }

  /// The items of a section the collection shows.
  public func collectionView(_ collectionView: UICollectionView, numberOfItemsInSection section: Int) -> Int {
    view.shownCounts[section]
  }

  /// An item's cell: dequeued by the kind its presenter names, and filled.
  public func collectionView(_ collectionView: UICollectionView, cellForItemAt indexPath: IndexPath)
    -> UICollectionViewCell
  {
    let dequeuer = CollectionCellDequeuer<Cell>(collectionView: collectionView, indexPath: indexPath)
    return source.cell(at: ItemPath(item: indexPath.item, section: indexPath.section), in: dequeuer).cell
  }
}

/// Dequeues a table's cells for one row, as a presenter names their kind.
@MainActor
final class TableCellDequeuer<Cell: UITableViewCell>: @MainActor CellDequeuing {
  let tableView: UITableView
  let indexPath: IndexPath
  init(tableView: UITableView, indexPath: IndexPath) {
    self.tableView = tableView
    self.indexPath = indexPath
  }
  func dequeueReusableCell(withIdentifier identifier: String) -> Cell {
    guard let cell = tableView.dequeueReusableCell(withIdentifier: identifier, for: indexPath) as? Cell else {
      preconditionFailure(
        "the table's cells of kind \(identifier) are not \(Cell.self): register that class for it")
    }
    return cell
  }
}

/// Dequeues a collection's cells for one item, as a presenter names their kind.
@MainActor
final class CollectionCellDequeuer<Cell: UICollectionViewCell>: @MainActor CellDequeuing {
  let collectionView: UICollectionView
  let indexPath: IndexPath
  init(collectionView: UICollectionView, indexPath: IndexPath) {
    self.collectionView = collectionView
    self.indexPath = indexPath
  }
  func dequeueReusableCell(withIdentifier identifier: String) -> Cell {
    guard
      let cell = collectionView.dequeueReusableCell(withReuseIdentifier: identifier, for: indexPath) as? Cell
    else {
      preconditionFailure(
        "the collection's cells of kind \(identifier) are not \(Cell.self): register that class for it")
    }
    return cell
  }
}
