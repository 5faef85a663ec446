/// An array kept in pages of 64 elements, so that the first write to a copy copies one page
/// and the short list of pages, not every element.
///
/// The handle sequences and columns of a view hold arrays of blocks (arrays themselves), and a
/// snapshot keeps a copy of each. Written after the copy, a plain array of blocks copies every
/// block's reference, a retain each and a release when the snapshot goes: at 100,000 items, a
/// few hundred objects touched (and cache misses) per edit, which made one insert cost twice
/// as much at 100k as at 10k. Paged, a write after a copy touches 64 references and the pages
/// list (n / 32,768 entries for blocks of 512).
@usableFromInline
package struct PagedArray<Element>: RandomAccessCollection, MutableCollection {
  @usableFromInline static var pageShift: Int { 6 }
  @usableFromInline static var pageSize: Int { 1 << pageShift }

  @usableFromInline var pages: [[Element]] = []
  @usableFromInline package var count = 0

  @usableFromInline package init() {}

  @inlinable package var startIndex: Int { 0 }
  @inlinable package var endIndex: Int { count }

  @inlinable
  package subscript(index: Int) -> Element {
    get {
      precondition(index >= 0 && index < count, "index out of range")
      return pages[index >> Self.pageShift][index & (Self.pageSize - 1)]
    }
    _modify {
      precondition(index >= 0 && index < count, "index out of range")
      yield &pages[index >> Self.pageShift][index & (Self.pageSize - 1)]
    }
  }

  @inlinable
  package mutating func append(_ element: Element) {
    if count & (Self.pageSize - 1) == 0 {
      var page: [Element] = []
      page.reserveCapacity(Self.pageSize)
      pages.append(page)
    }
    pages[pages.count - 1].append(element)
    count += 1
  }

  package mutating func removeAll() {
    pages = []
    count = 0
  }
}

extension PagedArray: Sendable where Element: Sendable {}
