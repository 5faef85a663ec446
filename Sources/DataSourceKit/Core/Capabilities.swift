// What a provider can do beyond counts and items, as protocols: the language asks a provider
// for a capability instead of knowing its concrete type, so a new provider gains editing,
// paging or push-down by conforming here, in its own file.

/// A provider whose items can be edited in place (insert, delete, update, move); its observers
/// are told, so every view derived from it changes too.
///
/// Each edit returns the batch of updates a table view of this provider gets for it.
public protocol EditableItems<Item>: DataProvider {
  /// Every item, in order.
  var items: [Item] { get }
  /// Replaces every item at once: the caller works out the new items first, so a failed edit
  /// changes nothing.
  @discardableResult func replaceItems(_ newItems: [Item]) -> BatchUpdate
  /// Inserts an item at a flat position.
  @discardableResult func insert(_ item: Item, at position: Int) -> BatchUpdate
  /// Removes the items at some flat positions.
  @discardableResult func remove(at positions: [Int]) -> BatchUpdate
  /// Replaces the items at some flat positions (an item equal to the old one is no change).
  @discardableResult func replace(
    _ replacements: [(position: Int, item: Item)], isEqual: (Item, Item) -> Bool
  )
    -> BatchUpdate
  /// Moves the item at `from` to `to`.
  @discardableResult func move(from: Int, to: Int) -> BatchUpdate
}

/// `limit N` keeps `count` N from 0, `offset N` skips N and keeps the rest.
public struct RowSlice: Sendable, Equatable {
  /// Items skipped first.
  public var offset: Int
  /// Items kept after them; `nil` for all.
  public var count: Int?

  /// Skips `offset` items (none below zero) and keeps `count` of the rest (all when `nil`).
  public init(offset: Int = 0, count: Int? = nil) {
    self.offset = max(0, offset)
    self.count = count.map { max(0, $0) }
  }
}

/// Every node under `root` (itself first), each once, depth first; without recursion, as a
/// chain of stages may be tens of thousands deep.
package func compositionNodes(under root: Any) -> [any CompositionNode] {
  var found: [any CompositionNode] = []
  var seen: Set<ObjectIdentifier> = []
  var pending: [any CompositionNode] = (root as? any CompositionNode).map { [$0] } ?? []
  while let node = pending.popLast() {
    guard seen.insert(ObjectIdentifier(node)).inserted else { continue }
    found.append(node)
    pending += node.nodeChildren.reversed()
  }
  return found
}
