import DataSourceKit
import DataSourceKitValues

// `/` and `n`/`N`: a search from the cursor through the rows, a window at a time, saying how
// far it has read.

extension BrowseScreen {
  // MARK: Search

  func search(_ text: String, interrupted: () -> Bool) {
    guard !text.isEmpty else {
      if query != nil { findAgain(forward: true, interrupted: interrupted) }
      return
    }
    query = text
    match = nil
    find(text, from: cursor + 1, forward: true, interrupted: interrupted)
  }

  func findAgain(forward: Bool, interrupted: () -> Bool) {
    guard let query else {
      message = "nothing searched yet: / and the text"
      return
    }
    let from = cursor
    find(query, from: forward ? from + 1 : from - 1, forward: forward, interrupted: interrupted)
  }

  /// Looks for `text` in the rows from `start` on (or back), a row at a time, stopping at ^C.
  private func find(_ text: String, from start: Int, forward: Bool, interrupted: () -> Bool) {
    let total = totalRows
    let offsets = sectionOffsets
    // A capital letter makes case matter, as less -i and vim's smartcase do.
    let caseMatters = text.contains { $0.isUppercase }
    let needle = caseMatters ? text : text.lowercased()
    var row = start
    var looked = 0
    searchProgress.start(total: total)
    defer { searchProgress.stop() }
    while row >= 0 && row < total {
      looked += 1
      if looked & 0x3FF == 0 {
        searchProgress.reached(row)
        if interrupted() {
          message = "search stopped at row \(Self.grouped(row + 1))"
          return
        }
      }
      let haystack = rowText(at: offsets.itemPath(forFlat: row))
      if (caseMatters ? haystack : haystack.lowercased()).contains(needle) {
        match = row
        top = min(row, lastTop())
        cursor = row
        message = "found at row \(Self.grouped(row + 1))"
        return
      }
      row += forward ? 1 : -1
    }
    message = "not found \(forward ? "below" : "above"): \(text)"
  }

  /// The text a row shows: its fields' values, or its cell's text and detail.
  private func rowText(at path: ItemPath) -> String {
    rowsRead += 1
    if showsFields {
      let item = view.dataSource.item(at: path)
      if case .record(let record) = item {
        return record.fields.map(\.value.description).joined(separator: "\t")
      }
      return item.description
    }
    let cell = view.dataSource.cell(at: path, in: view).cell.content
    return cell.text + "\t" + (cell.detail ?? "")
  }
}
