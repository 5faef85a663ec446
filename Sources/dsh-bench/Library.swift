// Issue 15: the library's snapshot → apply loop and its diff conveniences, against Swift's own
// CollectionDifference (with inferringMoves), in one run.
//   Scripts/bench.sh library                  (only these measures)
import DataSourceKit
import DataSourceKitValues
import Foundation

/// A message as an app holds one: `Identifiable` and `Equatable`, so it diffs without closures
/// (and `Hashable`, which `CollectionDifference.inferringMoves()` needs).
private struct Message: Identifiable, Hashable, Sendable {
  let id: Int
  var subject: String
}

@MainActor func measureLibrary() async {
  func median(_ runs: Int = 3, _ body: () -> Void) -> Double {
    body()  // warm-up
    return (0..<runs).map { _ in time(body) }.sorted()[runs / 2]
  }
  // DifferenceKit's published workload: 100,000 elements, 10,000 deleted, 10,000 inserted,
  // 2,000 moved.
  var random = SeededNumbers(seed: 15)
  let old = (0..<100_000).map { Message(id: $0, subject: "m\($0)") }
  var new = old
  for _ in 0..<10_000 { new.remove(at: random.next(new.count)) }
  for k in 0..<10_000 { new.insert(Message(id: 100_000 + k, subject: "new"), at: random.next(new.count + 1)) }
  for _ in 0..<2_000 {
    let element = new.remove(at: random.next(new.count))
    new.insert(element, at: random.next(new.count + 1))
  }
  let swift = median(1) { _ = new.difference(from: old).inferringMoves() }

  // 1. The flat-array convenience: Identifiable & Equatable elements, no closures.
  var flatChanges = 0
  let flat = median {
    let update = SectionedDiff.changeset(from: old, to: new).update
    flatChanges = update.insertedRows.count + update.deletedRows.count + update.movedRows.count
  }
  rows.append(
    Row(
      what: "diff 100k Identifiable & Equatable elements (10k/10k/2k), no closures",
      dsh: seconds(flat) + " (\(flatChanges) changes)",
      other: "CollectionDifference + inferringMoves: " + seconds(swift),
      figure: String(format: "%.0f× faster", swift / flat), target: "≥ 100×", met: swift / flat >= 100))

  // 2. The whole loop an app runs: edit the provider, take a snapshot of the data source, and
  //    have the view apply it (diff, then check the batch by UIKit's rules).
  let messages = EditableProvider(ArrayProvider(old))
  let source = TableAdapter(
    provider: messages, presenter: ClosurePresenter<Message>(style: .basic) { message, _ in message.subject })
  let view = ListView(dataSource: source)
  try? await source.load()
  var batchRows = 0
  var applied = 0.0
  var snapshotting = 0.0
  _ = median {
    messages.replaceItems(old)
    _ = try? view.apply(DataSourceSnapshot(of: source))
    messages.replaceItems(new)
    var snapshot = DataSourceSnapshot<SectionID, Int>()
    snapshotting = time { snapshot = DataSourceSnapshot(of: source) }
    applied = time {
      let update = (try? view.apply(snapshot)) ?? BatchUpdate()
      batchRows = update.insertedRows.count + update.deletedRows.count + update.movedRows.count
    }
  }
  let whole = snapshotting + applied
  rows.append(
    Row(
      what: "snapshot of a 100k-row data source + ListView.apply (diff, then UIKit's checks)",
      dsh: seconds(snapshotting) + " + " + seconds(applied) + " (\(batchRows) changes)",
      other: "CollectionDifference + inferringMoves alone: " + seconds(swift),
      figure: String(format: "%.0f× faster", swift / whole), target: "≥ 10×", met: swift / whole >= 10))
}

/// A row as the app in issue 35 held one: a UUID id and some text.
private struct Note: Identifiable, Hashable, Sendable {
  let id: UUID
  var text: String
}

/// Issue 35: one insert into 1k, 10k and 100k rows through the loop the README teaches.
///
/// The loop: edit the provider, `DataSourceSnapshot(of:)`, `ListView.apply`; beside the same loop with a
/// snapshot written out in full (`DataSourceSnapshot(of:itemID:)`, what every apply cost before
/// snapshots kept handles). The target is a cost that does not grow with the list.
@MainActor func measureAppLoop() async {
  var byCount: [Int: Double] = [:]
  for count in [1_000, 10_000, 100_000] {
    var random = SeededNumbers(seed: 35)
    let notes = (0..<count).map { Note(id: UUID(), text: "note \($0)") }
    func loop(kept: Bool) async -> Double {
      let provider = EditableProvider(ArrayProvider(notes))
      let table = TableAdapter(
        provider: provider, presenter: ClosurePresenter<Note>(style: .basic) { note, _ in note.text })
      try? await table.load()
      let view = ListView(dataSource: table)
      _ = try? view.apply(DataSourceSnapshot(of: table))
      _ = try? view.apply(DataSourceSnapshot(of: table, itemID: \.id))
      var runs: [Double] = []
      // Many runs of the kept loop (each a few microseconds; the list grows by a fifth at most):
      // a median of 21 moved by half between runs.
      for k in 0..<(kept ? 201 : 21) {
        let note = Note(id: UUID(), text: "new \(k)")
        let position = random.next(provider.totalItemCount + 1)
        runs.append(
          time {
            provider.insert(note, at: position)
            if kept {
              _ = try? view.apply(DataSourceSnapshot(of: table))
            } else {
              _ = try? view.apply(DataSourceSnapshot(of: table, itemID: \.id))
            }
          })
      }
      return runs.sorted()[runs.count / 2]
    }
    let kept = await loop(kept: true)
    let written = await loop(kept: false)
    byCount[count] = kept
    rows.append(
      Row(
        what: "one insert into \(count / 1_000)k rows: edit + DataSourceSnapshot(of:) + ListView.apply",
        dsh: String(format: "%.3f ms", kept * 1e3),
        other: String(format: "snapshot written out in full: %.3f ms", written * 1e3),
        figure: String(format: "%.0f× less", written / kept), target: "—", met: true))
  }
  // The same insert behind stages and headers, as the README's inbox has them: sorted by text,
  // sectioned by its last digit (ten sections), a header with each section's count.
  do {
    var random = SeededNumbers(seed: 36)
    let notes = (0..<100_000).map { _ in Note(id: UUID(), text: "note \(random.next(1_000_000))") }
    func staged(kept: Bool) async -> Double {
      let provider = EditableProvider(ArrayProvider(notes))
      let sorted = DerivedProvider.sorted(provider) { $0.text }
      let table = TableAdapter(
        provider: DerivedProvider.sectioned(sorted) { String($0.text.suffix(1)) },
        presenter: ClosurePresenter<Note>(style: .basic) { note, _ in note.text }
      ).header { "\($0.key?.value(as: String.self) ?? "") (\($0.count))" }
      try? await table.load()
      let view = ListView(dataSource: table)
      _ = try? view.apply(DataSourceSnapshot(of: table))
      _ = try? view.apply(DataSourceSnapshot(of: table, itemID: \.id))
      var runs: [Double] = []
      for _ in 0..<21 {
        let note = Note(id: UUID(), text: "note \(random.next(1_000_000))")
        let position = random.next(provider.totalItemCount + 1)
        runs.append(
          time {
            provider.insert(note, at: position)
            _ =
              kept
              ? try? view.apply(DataSourceSnapshot(of: table))
              : try? view.apply(DataSourceSnapshot(of: table, itemID: \.id))
          })
      }
      return runs.sorted()[runs.count / 2]
    }
    let kept = await staged(kept: true)
    let written = await staged(kept: false)
    rows.append(
      Row(
        what: "one insert into 100k rows behind sort + section + headers: edit + snapshot + apply",
        dsh: String(format: "%.3f ms", kept * 1e3),
        other: String(format: "snapshot written out in full: %.3f ms", written * 1e3),
        figure: String(format: "%.0f× less", written / kept), target: "—", met: true))
  }
  let growth = (byCount[100_000] ?? 0) / max(byCount[10_000] ?? 1, 1e-9)
  rows.append(
    Row(
      what: "one insert through the app's loop, 100k rows against 10k",
      dsh: String(
        format: "%.3f ms against %.3f ms", (byCount[100_000] ?? 0) * 1e3, (byCount[10_000] ?? 0) * 1e3),
      other: "a cost that grows with the list: 10×", figure: String(format: "%.1f×", growth),
      target: "≤ 2× (flat)", met: growth <= 2))
}

/// Issue 58: a whole new list handed to `replaceItems`, then a snapshot and an apply, on
/// DifferenceKit's benchmark shapes at 100k rows: on the main actor, and with the diff on a
/// background task (the main actor pays the edit, the snapshot and the apply of the batch).
///
/// Beside `SectionedDiff` of the two arrays, the library's whole diff (0.44–0.62×
/// DifferenceKit's `StagedChangeset` on these shapes, measured by the outside harness
/// docs/BENCHMARKS.md describes, which also times `StagedChangeset` on these arrays).
@MainActor func measureReplaceItems() async {
  for shape in ["block", "scattered", "reversed"] {
    var random = SeededNumbers(seed: 58)
    let count = 100_000
    let old = (0..<count).map { Note(id: UUID(), text: "note \($0)") }
    var new = old
    if shape == "block" {
      // DifferenceKit's Benchmark: delete 20000..<30000, insert 30000..<40000, shuffle 0..<2000.
      new.removeSubrange(20_000..<30_000)
      new.insert(contentsOf: (0..<10_000).map { Note(id: UUID(), text: "new \($0)") }, at: 30_000)
      for k in (1..<2_000).reversed() { new.swapAt(k, random.next(k + 1)) }
    } else if shape == "reversed" {
      // Every item moved: the old order walked backwards (a list sorted the other way).
      new.reverse()
    } else {
      // 10% deleted, 10% inserted, 2% moved, at random places.
      for _ in 0..<(count / 10) { new.remove(at: random.next(new.count)) }
      for k in 0..<(count / 10) {
        new.insert(Note(id: UUID(), text: "new \(k)"), at: random.next(new.count + 1))
      }
      for _ in 0..<(count / 50) {
        let element = new.remove(at: random.next(new.count))
        new.insert(element, at: random.next(new.count + 1))
      }
    }
    let provider = EditableProvider(ArrayProvider(old))
    let table = TableAdapter(
      provider: provider, presenter: ClosurePresenter<Note>(style: .basic) { note, _ in note.text })
    try? await table.load()
    let view = ListView(dataSource: table)
    var onMain: [Double] = []
    var editAlone: [Double] = []
    var mainShare: [Double] = []
    var whole: [Double] = []
    var changes = 0
    // DSH_BENCH_REPEATS=N runs each shape N times, to profile it.
    let repeats = ProcessInfo.processInfo.environment["DSH_BENCH_REPEATS"].flatMap { Int($0) } ?? 3
    for _ in 0..<repeats {
      provider.replaceItems(old)
      _ = try? view.apply(DataSourceSnapshot(of: table))
      onMain.append(
        time {
          editAlone.append(time { provider.replaceItems(new) })
          let update = (try? view.apply(DataSourceSnapshot(of: table))) ?? BatchUpdate()
          changes = update.insertedRows.count + update.deletedRows.count + update.movedRows.count
        })

      provider.replaceItems(old)
      _ = try? view.apply(DataSourceSnapshot(of: table))
      guard let shown = view.shownSnapshot(as: DataSourceSnapshot<SectionID, UUID>.self) else { continue }
      let started = DispatchTime.now().uptimeNanoseconds
      var share = 0.0
      var snapshot = shown
      share += time {
        provider.replaceItems(new)
        snapshot = DataSourceSnapshot(of: table)
      }
      let taken = snapshot
      let batch = await Task.detached { try? taken.batch(from: shown) }.value
      share += time { _ = try? view.apply(taken, batch: batch ?? BatchUpdate(), from: shown) }
      mainShare.append(share)
      whole.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
    }
    let diff = time {
      _ = SectionedDiff.changeset(
        from: [DiffSection(id: 0, elements: old)], to: [DiffSection(id: 0, elements: new)])
    }
    let median = { (runs: [Double]) in runs.sorted()[runs.count / 2] }
    rows.append(
      Row(
        what: "replaceItems of 100k rows (\(shape)) + snapshot + apply: on the main actor; diff on a task",
        dsh: String(
          format: "%.1f ms (replaceItems %.1f); main actor %.1f ms of %.1f ms (%d changes)",
          median(onMain) * 1e3, median(editAlone) * 1e3, median(mainShare) * 1e3,
          median(whole) * 1e3, changes),
        other: String(format: "SectionedDiff of the arrays: %.1f ms", diff * 1e3),
        figure: String(format: "%.1f× the diff", median(onMain) / max(diff, 1e-9)),
        target: shape == "reversed"
          ? "none: every row moves (DifferenceKit's shapes are the goal's)"
          : "≤ 1× StagedChangeset (≈ 2× SectionedDiff): see docs/BENCHMARKS.md",
        met: median(onMain) <= 2 * diff, informational: shape == "reversed"))
  }
}
