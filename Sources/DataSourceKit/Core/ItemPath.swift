/// The position of an item: its section and its place inside the section, both from zero.
///
/// UIKit calls this an `IndexPath`; Foundation on Linux has an `IndexPath` without `section`
/// and `item`, so a distinct name keeps files that import both unambiguous.
public struct ItemPath: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// The section.
  public var section: Int
  /// The item at an index path.
  public var item: Int

  /// The item at `item` in section `section`.
  public init(item: Int, section: Int) {
    self.section = section
    self.item = item
  }

  /// Whether `lhs` comes before `rhs`: by section, then by item.
  public static func < (lhs: ItemPath, rhs: ItemPath) -> Bool {
    (lhs.section, lhs.item) < (rhs.section, rhs.item)
  }

  /// A description for people.
  public var description: String { "[\(section), \(item)]" }
}
