/// The position of an item: its section and its place inside the section, both from zero.
///
/// UIKit calls this an `IndexPath`; Foundation on Linux has an `IndexPath` without `section`
/// and `item`, so a distinct name keeps files that import both unambiguous.
public struct ItemPath: Hashable, Comparable, Sendable, CustomStringConvertible {
  public var section: Int
  public var item: Int

  public init(item: Int, section: Int) {
    self.section = section
    self.item = item
  }

  public static func < (lhs: ItemPath, rhs: ItemPath) -> Bool {
    (lhs.section, lhs.item) < (rhs.section, rhs.item)
  }

  public var description: String { "[\(section), \(item)]" }
}
