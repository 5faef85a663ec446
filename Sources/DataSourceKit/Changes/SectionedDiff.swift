/// One section of data to diff: its identity and its elements in order.
public struct DiffSection<SectionID: Hashable, Element> {
  /// The section's identity.
  public var id: SectionID
  /// Its elements, in order.
  public var elements: [Element]

  /// A section `id` holding `elements`.
  public init(id: SectionID, elements: [Element]) {
    self.id = id
    self.elements = elements
  }
}

extension DiffSection: Sendable where SectionID: Sendable, Element: Sendable {}
extension DiffSection: Equatable where Element: Equatable {}

extension SectionedDiff {
  /// The result of a diff: the batch, and the identities that were not unique.
  public struct Result<ElementID: Hashable>: Sendable where ElementID: Sendable {
    /// The batch of updates that turns the old data into the new.
    public var update: BatchUpdate
    /// Element identities that appear more than once on either side.
    ///
    /// They are matched in order (the first old with the first new, and so on): moves among them are a
    /// best effort.
    public var duplicates: [ElementID]

    /// The batch `update`, with the identities that were not unique.
    public init(update: BatchUpdate, duplicates: [ElementID]) {
      self.update = update
      self.duplicates = duplicates
    }
  }
}

/// Turns old sectioned data into new as one batch of updates UIKit accepts.
///
/// Elements are matched by identity in O(n) expected time, as Heckel's algorithm does (the
/// approach of IGListKit and DifferenceKit): one pass records where each identity stands
/// before and after, and matched pairs whose relative order changed become moves, found as the
/// complement of a longest increasing subsequence. Sections are matched the same way by their
/// identity. A moved row whose content changed is moved and listed in
/// ``BatchUpdate/reloadedAfterMoves`` (UIKit refuses to reload a moved row in the batch); a moved
/// section with row changes, which UIKit refuses too, is deleted and inserted whole.
public enum SectionedDiff {
  /// A position in sectioned data.
  ///
  /// Held in 32 bits each (a diffed view has at most ten million rows): the tables of places are
  /// as large as the data, and half the memory is half the cache misses.
  @usableFromInline
  struct Place: Hashable {
    @usableFromInline var storedSection: Int32
    @usableFromInline var storedItem: Int32
    @usableFromInline var section: Int { Int(storedSection) }
    @usableFromInline var item: Int { Int(storedItem) }
    @usableFromInline init(section: Int, item: Int) {
      storedSection = Int32(truncatingIfNeeded: section)
      storedItem = Int32(truncatingIfNeeded: item)
    }
    @usableFromInline var path: ItemPath { ItemPath(item: item, section: section) }
    /// No place: an element without a match (a sentinel, not an optional, to keep a place in 8 bytes).
    @usableFromInline static var none: Place { Place(section: -1, item: 0) }
  }

  /// The batch of updates that turns `old` into `new`: elements matched by `id`, reloaded when `contentEqual` says their content changed.
  ///
  /// - Parameters:
  ///   - old: the sections before.
  ///   - new: the sections after.
  ///   - id: an element's identity (a key field, or the whole value).
  ///   - contentEqual: whether two elements with the same identity show the same content;
  ///     when not, the row is reloaded.
  /// - Complexity: O(n log n) for n elements: hashing is O(n) expected, and the longest
  ///   increasing subsequences that find the rows that stay are O(k log k) per section.
  ///
  /// Long because its passes (sections matched, elements matched, the rows that stay found by a longest increasing subsequence, the moves and reloads) share the tables each fills; apart, each would take and return them all.
  @inlinable
  public static func changeset<SectionID: Hashable, Element, ElementID: Hashable & Sendable>(
    from old: [DiffSection<SectionID, Element>], to new: [DiffSection<SectionID, Element>],
    id: (Element) -> ElementID, contentEqual: (Element, Element) -> Bool
  ) -> Result<ElementID> {
    // Sections: match by identity, the k-th old with the k-th new of the same identity.
    var oldSectionsByID: [SectionID: [Int]] = [:]
    for (index, section) in old.enumerated() { oldSectionsByID[section.id, default: []].append(index) }
    var newToOldSection = [Int?](repeating: nil, count: new.count)
    for (index, section) in new.enumerated() {
      if let first = oldSectionsByID[section.id]?.first {
        newToOldSection[index] = first
        oldSectionsByID[section.id]?.removeFirst()
      }
    }
    // Matched sections that keep their relative order stay; the others move.
    let matched = newToOldSection.enumerated().compactMap { n, o in o.map { (new: n, old: $0) } }
    let staying = Set(longestIncreasingSubsequence(matched.map(\.old)).map { matched[$0].new })
    var movedSections = Set(matched.map(\.new)).subtracting(staying)
    // Moved sections rewritten as delete + insert because their rows change too (flags by new
    // section: asked once per row, where a set would hash each time).
    var replaced = [Bool](repeating: false, count: new.count)

    // Elements: match by identity, each hashed once (one table entry per distinct identity).
    // Only identities seen more than once keep lists (the k-th old pairs with the k-th new).
    var newToOld = new.map { [Place](repeating: .none, count: $0.elements.count) }
    var oldToNew = old.map { [Place](repeating: .none, count: $0.elements.count) }
    // Room for the new side's identities too: those not in the old data are entered with a mark.
    var table = IdentityTable<ElementID>(
      capacity: old.reduce(0) { $0 + $1.elements.count } + new.reduce(0) { $0 + $1.elements.count } / 4)
    var laterOld: [Int: [Place]] = [:]  // by entry: occurrences 2, 3, … of repeated identities
    var duplicates = Set<Int>()  // entries
    for (s, section) in old.enumerated() {
      for i in section.elements.indices {
        let place = Place(section: s, item: i)
        let (entry, isNew) = table.enter(id(section.elements[i]), place: place)
        if !isNew {
          laterOld[entry, default: []].append(place)
          duplicates.insert(entry)
        }
      }
    }
    let oldRepeats = !laterOld.isEmpty
    var newSeen: [Int: Int] = [:]  // by entry: occurrences so far, for repeated identities only
    // An identity not in the old data is entered with a mark (`newOnly`), so that seeing it
    // again finds the mark and is a repeat.
    let newOnly = Place(section: -2, item: 0)
    for (s, section) in new.enumerated() {
      for i in section.elements.indices {
        let (entry, isNew) = table.enter(id(section.elements[i]), place: newOnly)
        if isNew { continue }
        let first = table.places[entry]
        guard first != newOnly else {
          duplicates.insert(entry)  // new on this side, and seen before
          continue
        }
        let match: Place
        if oldRepeats, let later = laterOld[entry] {
          let k = newSeen[entry, default: 0]
          newSeen[entry] = k + 1
          match = k == 0 ? first : (k - 1 < later.count ? later[k - 1] : .none)
        } else if oldToNew[first.section][first.item] == .none {
          match = first
        } else {
          duplicates.insert(entry)  // repeated on the new side only
          match = .none
        }
        if match != .none {
          newToOld[s][i] = match
          oldToNew[match.section][match.item] = Place(section: s, item: i)
        }
      }
    }
    let duplicateList = duplicates.sorted().map { table.identities[$0] }

    while true {
      // Which new sections continue an old one, and which old section each became.
      var newOfOld = [Int?](repeating: nil, count: old.count)
      for (n, o) in newToOldSection.enumerated() where !replaced[n] { if let o { newOfOld[o] = n } }
      func survives(new n: Int) -> Bool { newToOldSection[n] != nil && !replaced[n] }

      var update = BatchUpdate()
      var touched = [Bool](repeating: false, count: new.count)  // new sections with row changes
      for n in new.indices where survives(new: n) {
        guard let o = newToOldSection[n] else { continue }
        let rows = newToOld[n]
        // Rows from the same old section keep their place when their order holds: flags by
        // row, not a set, so no row is hashed again.
        var sameNew: [Int] = []
        var sameOld: [Int] = []
        sameNew.reserveCapacity(rows.count)
        sameOld.reserveCapacity(rows.count)
        for (i, place) in rows.enumerated() where place.section == o {
          sameNew.append(i)
          sameOld.append(place.item)
        }
        var stays = [Bool](repeating: false, count: rows.count)
        for k in longestIncreasingSubsequence(sameOld) { stays[sameNew[k]] = true }
        for (i, place) in rows.enumerated() {
          let newPath = ItemPath(item: i, section: n)
          guard place != .none, let from = newOfOld[place.section] else {
            // New, or its old section is gone (the section's delete took the old row).
            update.insertedRows.append(newPath)
            touched[n] = true
            continue
          }
          let changed = !contentEqual(old[place.section].elements[place.item], new[n].elements[i])
          if stays[i] {
            if changed {
              update.reloadedRows.append(place.path)
              touched[n] = true
            }
          } else {
            update.movedRows.append((place.path, newPath))
            // UIKit cannot reload a moved row in the batch: it is refreshed after it.
            if changed { update.reloadedAfterMoves.append(newPath) }
            touched[n] = true
            touched[from] = true
          }
        }
      }
      // Rows of surviving old sections that no surviving new section continues are deleted.
      for o in old.indices {
        guard let n = newOfOld[o] else { continue }
        for i in old[o].elements.indices {
          let next = oldToNew[o][i]
          if next != .none, survives(new: next.section) { continue }
          update.deletedRows.append(ItemPath(item: i, section: o))
          touched[n] = true
        }
      }

      // UIKit refuses row changes in a moved section: rewrite it as delete + insert, again.
      let conflicts = movedSections.filter { touched[$0] }
      if !conflicts.isEmpty {
        for n in conflicts { replaced[n] = true }
        movedSections.subtract(conflicts)
        continue
      }
      update.deletedSections = old.indices.filter { newOfOld[$0] == nil }
      update.insertedSections = new.indices.filter { !survives(new: $0) }
      update.movedSections = movedSections.sorted().compactMap { n in
        newToOldSection[n].map { (from: $0, to: n) }
      }
      // Inserts, moves and reloads after moves were listed by new place, deletes by old place:
      // in order already. Reloads are listed by old place in new order, which a moved section
      // can break.
      update.reloadedRows.sort()
      return Result(update: update, duplicates: duplicateList)
    }
  }
}

/// The indexes (into `values`) of one longest strictly increasing subsequence.
/// - Complexity: O(n log n).
@usableFromInline
func longestIncreasingSubsequence(_ values: [Int]) -> [Int] {
  var tails: [Int] = []  // indexes into values: the smallest tail of each length
  var previous = [Int](repeating: -1, count: values.count)
  for (i, value) in values.enumerated() {
    // Past the longest run so far: what most values of a list that mostly kept its order are.
    if let last = tails.last, values[last] < value {
      previous[i] = last
      tails.append(i)
      continue
    }
    var low = 0
    var high = tails.count
    while low < high {
      let mid = (low + high) / 2
      if values[tails[mid]] < value { low = mid + 1 } else { high = mid }
    }
    if low > 0 { previous[i] = tails[low - 1] }
    if low == tails.count { tails.append(i) } else { tails[low] = i }
  }
  var result: [Int] = []
  var current = tails.last ?? -1
  while current >= 0 {
    result.append(current)
    current = previous[current]
  }
  return result.reversed()
}

extension SectionedDiff {
  /// The batch that turns old sections of `Identifiable & Equatable` elements into new ones:
  /// elements matched by `id`, reloaded when they are no longer equal.
  /// - Complexity: O(n) expected.
  @inlinable
  public static func changeset<SectionID: Hashable, Element: Identifiable & Equatable>(
    from old: [DiffSection<SectionID, Element>], to new: [DiffSection<SectionID, Element>]
  ) -> Result<Element.ID> where Element.ID: Sendable {
    changeset(from: old, to: new, id: \.id, contentEqual: ==)
  }

  /// The batch that turns old sections of `Hashable` elements into new ones: each element is its
  /// own identity, so a changed element is a delete and an insert.
  /// - Complexity: O(n) expected.
  @inlinable
  public static func changeset<SectionID: Hashable, Element: Hashable & Sendable>(
    from old: [DiffSection<SectionID, Element>], to new: [DiffSection<SectionID, Element>]
  ) -> Result<Element> {
    changeset(from: old, to: new, id: { $0 }, contentEqual: { _, _ in true })
  }

  /// The batch that turns old sections of elements both `Identifiable` and `Hashable` into new
  /// ones: matched by `id` (this overload settles the choice for types that are both).
  /// - Complexity: O(n) expected.
  @inlinable
  public static func changeset<SectionID: Hashable, Element: Identifiable & Hashable & Sendable>(
    from old: [DiffSection<SectionID, Element>], to new: [DiffSection<SectionID, Element>]
  ) -> Result<Element.ID> where Element.ID: Sendable {
    changeset(from: old, to: new, id: \.id, contentEqual: ==)
  }

  /// The batch that turns a flat array into another (one section, section 0): elements matched
  /// by `id`, reloaded when `contentEqual` says their content changed.
  /// - Complexity: O(n) expected.
  @inlinable
  public static func changeset<Element, ElementID: Hashable & Sendable>(
    from old: [Element], to new: [Element], id: (Element) -> ElementID,
    contentEqual: (Element, Element) -> Bool
  ) -> Result<ElementID> {
    changeset(
      from: [DiffSection(id: 0, elements: old)], to: [DiffSection(id: 0, elements: new)], id: id,
      contentEqual: contentEqual)
  }

  /// The batch that turns a flat array of `Identifiable & Equatable` elements into another (one
  /// section, section 0).
  /// - Complexity: O(n) expected.
  @inlinable
  public static func changeset<Element: Identifiable & Equatable>(
    from old: [Element], to new: [Element]
  ) -> Result<Element.ID> where Element.ID: Sendable {
    changeset(from: old, to: new, id: \.id, contentEqual: ==)
  }

  /// The batch that turns a flat array of `Identifiable` elements that are also `Hashable` into
  /// another: matched by `id`, as for any `Identifiable & Equatable` elements (this overload
  /// settles the choice for types that are both).
  /// - Complexity: O(n) expected.
  @inlinable
  public static func changeset<Element: Identifiable & Hashable & Sendable>(
    from old: [Element], to new: [Element]
  ) -> Result<Element.ID> where Element.ID: Sendable {
    changeset(from: old, to: new, id: \.id, contentEqual: ==)
  }

  /// The batch that turns a flat array of `Hashable` elements into another (one section, section
  /// 0): each element is its own identity, so a changed element is a delete and an insert.
  /// - Complexity: O(n) expected.
  @inlinable
  public static func changeset<Element: Hashable & Sendable>(
    from old: [Element], to new: [Element]
  ) -> Result<Element> {
    changeset(from: old, to: new, id: { $0 }, contentEqual: { _, _ in true })
  }
}
