// What a provider can do beyond counts and items, as protocols: the language asks a provider
// for a capability instead of knowing its concrete type, so a new provider gains editing,
// paging or push-down by conforming here, in its own file.

/// A provider whose items can be edited in place (insert, delete, update, move); its observers
/// are told, so every view derived from it changes too.
public protocol EditableItems<Item>: DataProvider {
  var items: [Item] { get }
  /// Replaces every item at once: the caller works out the new items first, so a failed edit
  /// changes nothing.
  func replaceItems(_ newItems: [Item])
  /// Inserts an item at a flat position.
  func insert(_ item: Item, at position: Int)
  /// Removes the items at some flat positions.
  func remove(at positions: [Int])
  /// Replaces the items at some flat positions (an item equal to the old one is no change).
  func replace(_ replacements: [(position: Int, item: Item)], isEqual: (Item, Item) -> Bool)
  /// Moves the item at `from` to `to`.
  func move(from: Int, to: Int)
}

/// A provider that reads a store it must never write (a database): edits on it are refused.
public protocol ReadOnlyStore: AnyObject {
  /// What the store is, for the refusal: "a sqlite provider".
  var storeDescription: String { get }
}

/// A stage a provider may run itself rather than in memory.
public enum PushdownStage: Sendable, Equatable {
  case filter(RowExpression)
  case sort([SortTerm])
  case section(SortTerm)
  case limit(Int)
}

/// A provider that can run stages itself (a database runs them in its query language).
public protocol QueryPushdown: DataProvider where Item == Value {
  /// A new provider that also runs `stage`, or `nil` when this one cannot say it (then the
  /// stage runs in memory over its items). The result is not loaded yet.
  func pushingDown(_ stage: PushdownStage) -> (any DataProvider<Value>)?
}
