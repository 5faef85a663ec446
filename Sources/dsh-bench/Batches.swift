// Issue 14: checking and replaying a batch (`BatchUpdate.validate` and `apply`) cost at most the
// diff that made it. Both were quadratic: a list searched for each row, an insert at a time.
//   Scripts/bench.sh batches                  (only this measure)
import DataSourceKit
import DataSourceKitValues
import Foundation

@MainActor func measureBatches() {
  // 400,000 rows in 400 sections, 10% deleted, 10% inserted, 2,000 rows moved across sections.
  var random = SeededNumbers(seed: 14)
  let old = (0..<400).map { s in DiffSection(id: s, elements: Array(s * 1_000..<s * 1_000 + 1_000)) }
  var new = old.map { section in
    DiffSection(id: section.id, elements: section.elements.filter { _ in random.next(10) != 0 })
  }
  var fresh = 1_000_000
  for s in new.indices {
    for _ in 0..<100 {
      new[s].elements.insert(fresh, at: random.next(new[s].elements.count + 1))
      fresh += 1
    }
  }
  for _ in 0..<2_000 {
    let from = random.next(new.count)
    let element = new[from].elements.remove(at: random.next(new[from].elements.count))
    let to = random.next(new.count)
    new[to].elements.insert(element, at: random.next(new[to].elements.count + 1))
  }
  var changeset: SectionedDiff.Result<Int>?
  let diffing = time {
    changeset = SectionedDiff.changeset(from: old, to: new, id: { $0 }, contentEqual: ==)
  }
  let (before, after) = (old.map(\.elements.count), new.map(\.elements.count))
  let (oldRows, newRows) = (old.map(\.elements), new.map(\.elements))
  var valid = false
  var replayed = false
  let checking = time { valid = (try? changeset?.update.validate(before: before, after: after)) != nil }
  var result: [[Int]]?
  let applying = time { result = changeset?.update.apply(to: oldRows, new: newRows) }
  replayed = result == newRows
  rows.append(
    Row(
      what: "validate + apply a batch of 400k rows (400 sections)",
      dsh: seconds(checking) + " + " + seconds(applying),
      other: "the diff that made it: " + seconds(diffing),
      figure: valid && replayed
        ? String(format: "%.2f× / %.2f×", checking / diffing, applying / diffing) : "INVALID",
      target: "each ≤ 1.0×", met: valid && replayed && checking <= diffing && applying <= diffing))
}
