// The few UIKit types Bridge/DataSourceKitUIKit.swift uses, with UIKit's signatures and none of
// its drawing: where UIKit is not (Linux, CI), the bridge is compiled against these, so that it
// cannot drift from the library, and its tests read back the calls a view received.
//
// Only what the bridge calls is here. Where UIKit's method is optional in Objective-C (a data
// source's titles), it is a plain requirement: the bridge implements every one.
import Foundation

extension IndexPath {
  /// A row of a table view's section, as UIKit makes one.
  public init(row: Int, section: Int) { self.init(indexes: [section, row]) }
  /// An item of a collection view's section, as UIKit makes one.
  public init(item: Int, section: Int) { self.init(indexes: [section, item]) }
  /// The section.
  public var section: Int { self[0] }
  /// The row, in a table view.
  public var row: Int { self[1] }
  /// The item, in a collection view.
  public var item: Int { self[1] }
}

/// A view.
@MainActor open class UIView {
  /// A view.
  public init() {}
}

/// A scrolling view; here, what a table view and a collection view share: the calls that
/// change what they show, recorded in ``calls``.
@MainActor open class UIScrollView: UIView {
  /// What was called, in order: `reloadData`, `begin`, `deleteRows [[0, 1]]`, `end`, ….
  public private(set) var calls: [String] = []

  /// Reads everything again.
  public func reloadData() { calls.append("reloadData") }
  /// Runs `updates` as one animated batch.
  public func performBatchUpdates(_ updates: (() -> Void)?, completion: ((Bool) -> Void)? = nil) {
    calls.append("begin")
    updates?()
    calls.append("end")
    completion?(true)
  }
  /// Records a call; an empty list changes nothing and is not recorded (UIKit takes it as
  /// nothing).
  func record(_ name: String, _ values: [some Any]) {
    if !values.isEmpty { calls.append("\(name) \(values)") }
  }
  /// Records a call of two places.
  func record(_ name: String, from: some Any, to: some Any) { calls.append("\(name) \(from) \(to)") }
}

/// A table view's cell.
@MainActor open class UITableViewCell: UIView {
  /// The cell's layout of its labels.
  public enum CellStyle: Sendable {
    case `default`, value1, value2, subtitle
  }
  /// The kind of cell, which its table view reuses it for.
  public let reuseIdentifier: String?
  /// A cell of a kind.
  public required init(style: CellStyle, reuseIdentifier: String?) {
    self.reuseIdentifier = reuseIdentifier
    super.init()
  }
  /// Clears what the last row left.
  open func prepareForReuse() {}
}

/// What a table view asks of its data source.
@MainActor public protocol UITableViewDataSource: AnyObject {
  /// The number of sections.
  func numberOfSections(in tableView: UITableView) -> Int
  /// The number of rows in a section.
  func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int
  /// The cell of a row.
  func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell
  /// A section's header title.
  func tableView(_ tableView: UITableView, titleForHeaderInSection section: Int) -> String?
  /// A section's footer title.
  func tableView(_ tableView: UITableView, titleForFooterInSection section: Int) -> String?
}

/// A table view: no drawing; each call that changes what it shows is recorded in ``calls``.
@MainActor open class UITableView: UIScrollView {
  /// How rows and sections come and go.
  public enum RowAnimation: Sendable {
    case fade, right, left, top, bottom, none, middle, automatic
  }
  /// Where the rows and cells come from.
  public weak var dataSource: (any UITableViewDataSource)?
  private var registered: [String: UITableViewCell.Type] = [:]

  /// A table view.
  public override init() { super.init() }

  /// Makes cells of `cellClass` for the kind `identifier`.
  public func register(_ cellClass: AnyClass?, forCellReuseIdentifier identifier: String) {
    registered[identifier] = cellClass as? UITableViewCell.Type
  }
  /// A cell of the kind, made by its registration.
  public func dequeueReusableCell(withIdentifier identifier: String, for indexPath: IndexPath)
    -> UITableViewCell
  {
    guard let type = registered[identifier] else {
      preconditionFailure("unable to dequeue a cell with identifier \(identifier)")
    }
    return type.init(style: .default, reuseIdentifier: identifier)
  }
  public func insertSections(_ sections: IndexSet, with animation: RowAnimation) {
    record("insertSections", Array(sections))
  }
  public func deleteSections(_ sections: IndexSet, with animation: RowAnimation) {
    record("deleteSections", Array(sections))
  }
  public func reloadSections(_ sections: IndexSet, with animation: RowAnimation) {
    record("reloadSections", Array(sections))
  }
  public func moveSection(_ section: Int, toSection newSection: Int) {
    record("moveSection", from: section, to: newSection)
  }
  public func insertRows(at indexPaths: [IndexPath], with animation: RowAnimation) {
    record("insertRows", indexPaths.map(Array.init))
  }
  public func deleteRows(at indexPaths: [IndexPath], with animation: RowAnimation) {
    record("deleteRows", indexPaths.map(Array.init))
  }
  public func reloadRows(at indexPaths: [IndexPath], with animation: RowAnimation) {
    record("reloadRows", indexPaths.map(Array.init))
  }
  public func reconfigureRows(at indexPaths: [IndexPath]) {
    record("reconfigureRows", indexPaths.map(Array.init))
  }
  public func moveRow(at indexPath: IndexPath, to newIndexPath: IndexPath) {
    record("moveRow", from: Array(indexPath), to: Array(newIndexPath))
  }
}

/// A collection view's cell.
@MainActor open class UICollectionViewCell: UIView {
  /// The kind of cell, which its collection view reuses it for.
  public private(set) var reuseIdentifier: String?
  /// A cell.
  public required override init() { super.init() }
  /// Clears what the last item left.
  open func prepareForReuse() {}
  fileprivate func named(_ identifier: String) -> Self {
    reuseIdentifier = identifier
    return self
  }
}

/// What a collection view asks of its data source.
@MainActor public protocol UICollectionViewDataSource: AnyObject {
  /// The number of sections.
  func numberOfSections(in collectionView: UICollectionView) -> Int
  /// The number of items in a section.
  func collectionView(_ collectionView: UICollectionView, numberOfItemsInSection section: Int) -> Int
  /// The cell of an item.
  func collectionView(_ collectionView: UICollectionView, cellForItemAt indexPath: IndexPath)
    -> UICollectionViewCell
}

/// A collection view: no drawing; each call that changes what it shows is recorded in ``calls``.
@MainActor open class UICollectionView: UIScrollView {
  /// Where the items and cells come from.
  public weak var dataSource: (any UICollectionViewDataSource)?
  private var registered: [String: UICollectionViewCell.Type] = [:]

  /// A collection view.
  public override init() { super.init() }

  /// Makes cells of `cellClass` for the kind `identifier`.
  public func register(_ cellClass: AnyClass?, forCellWithReuseIdentifier identifier: String) {
    registered[identifier] = cellClass as? UICollectionViewCell.Type
  }
  /// A cell of the kind, made by its registration.
  public func dequeueReusableCell(withReuseIdentifier identifier: String, for indexPath: IndexPath)
    -> UICollectionViewCell
  {
    guard let type = registered[identifier] else {
      preconditionFailure(
        "could not dequeue a view of kind UICollectionElementKindCell with identifier \(identifier)")
    }
    return type.init().named(identifier)
  }
  public func insertSections(_ sections: IndexSet) { record("insertSections", Array(sections)) }
  public func deleteSections(_ sections: IndexSet) { record("deleteSections", Array(sections)) }
  public func reloadSections(_ sections: IndexSet) { record("reloadSections", Array(sections)) }
  public func moveSection(_ section: Int, toSection newSection: Int) {
    record("moveSection", from: section, to: newSection)
  }
  public func insertItems(at indexPaths: [IndexPath]) { record("insertItems", indexPaths.map(Array.init)) }
  public func deleteItems(at indexPaths: [IndexPath]) { record("deleteItems", indexPaths.map(Array.init)) }
  public func reloadItems(at indexPaths: [IndexPath]) { record("reloadItems", indexPaths.map(Array.init)) }
  public func reconfigureItems(at indexPaths: [IndexPath]) {
    record("reconfigureItems", indexPaths.map(Array.init))
  }
  public func moveItem(at indexPath: IndexPath, to newIndexPath: IndexPath) {
    record("moveItem", from: Array(indexPath), to: Array(newIndexPath))
  }
}
