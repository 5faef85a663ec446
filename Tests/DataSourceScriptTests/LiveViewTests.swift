import DataSourceKit
import DataSourceKitValues
import Foundation
import Testing

@testable import DataSourceScript

/// Views of edited tables, alone and composed or segmented with other tables: after random
/// edits, the batch worked out from the touched items is one UIKit accepts, and it turns what
/// the view showed into what it shows.
@Suite("Live views")
@MainActor
struct LiveViewTests {
  @Test("random edits through compose and segmented views replay", arguments: [1, 2, 3] as [UInt64])
  func composedAndSegmented(seed: UInt64) async throws {
    var state = seed &* 6_364_136_223_846_793_005 &+ 1
    func next(_ bound: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((state >> 33) % UInt64(bound))
    }
    let groups = ["\"a\"", "\"b\"", "\"c\"", "null"]
    let rows = (0..<30).map { "{id: \($0), g: \(groups[next(4)]), v: \(next(9))}" }.joined(separator: ", ")
    let setup = """
      let p = array [\(rows)] key id
      let byGroup = table (p | where v > 2 | sort by v desc | section by g) with cell basic "{id}" | header "{section}: {count}"
      let top = table (p | sort by id | limit 5) with cell basic "{id}"
      let ext = table (p | extend w = v * 2 | where w > 4 | sort by w desc | section by g) with cell basic "{id} {w}"
      let menu = table ["Home", "Search"] with cell basic "{.}"
      let screen = compose menu, byGroup, top
      let tabs = segmented main: screen, other: menu
      """
    let (session, output, ok) = await run(setup)
    #expect(ok, "\(output.errors)")
    var nextID = 100
    for round in 0..<80 {
      let names = ["screen", "tabs", "byGroup", "p", "ext"]
      let name = names[next(names.count)]
      let value = try #require(session.bindings[name]?.value)
      let baseline = try #require(try ChangeTracker.baseline(of: value))
      // Fields computed from the table keep its handles: the view is kept item by item too.
      if name == "ext" || name == "byGroup" { #expect(baseline.hasSnapshot, "round \(round): \(name)") }
      let old = try ChangeTracker.viewData(of: baseline)
      var count = try #require(ChangeTracker.sectionCounts(of: session.bindings["p"]!.value)).reduce(0, +)
      var edits: [String] = []
      for _ in 0..<(1 + next(3)) {
        switch next(count < 5 ? 2 : 5) {
        case 0:
          edits.append(
            "insert into p {id: \(nextID), g: \(groups[next(4)]), v: \(next(9))} at \(next(count + 1))")
          nextID += 1
          count += 1
        case 1:
          edits.append("update p set v = \(next(9)), g = \(groups[next(4)]) where id == \(next(nextID))")
        case 2: edits.append("move p from \(next(count)) to \(next(count))")
        case 3:
          edits.append("delete from p at \(next(count))")
          count -= 1
        default: edits.append("update p set v = v + 1 where v == \(next(9))")
        }
      }
      if next(6) == 0 { edits.append("switch tabs to \(next(2) == 0 ? "main" : "other")") }
      let (_, _, edited) = await run(edits.joined(separator: "\n"), in: session)
      #expect(edited, "round \(round): \(output.errors)")
      let current = try #require(try ChangeTracker.viewData(of: value))
      let source = try #require(ChangeTracker.viewSource(of: value))
      let before = old.sections.map(\.elements.count)
      let after = current.sections.map(\.elements.count)
      guard let (update, counted, now) = try ChangeTracker.batch(since: baseline, source: source) else {
        // A segment switched: the view is compared whole.
        #expect(edits.contains { $0.hasPrefix("switch") }, "round \(round)")
        continue
      }
      #expect(counted == before && now == after, "round \(round): counts of \(name)")
      #expect(throws: Never.self, "round \(round), \(name): \(update)") {
        try update.validate(before: before, after: after)
      }
      if (try? update.validate(before: before, after: after)) != nil {
        let replayed = update.apply(
          to: old.sections.map { $0.elements.map(\.item) },
          new: current.sections.map { $0.elements.map(\.item) })
        #expect(
          replayed == current.sections.map { $0.elements.map(\.item) }, "round \(round), \(name): \(update)")
      }
    }
  }

  static let people = "let e = csv \"Scripts/data/people.csv\" key id\n"

  @Test("a key renamed by select still identifies the groups: the same moves and reloads as without it")
  func keyFollowsSelect() async throws {
    func changes(_ stages: String) async -> String {
      let (_, output, ok) = await run(
        Self.people + """
          let s = e | group by team with n = count()\(stages)
          show s
          update e set team = "Design" where id == 2
          changes s
          """)
      #expect(ok, "\(output.errors)")
      return String(output.text.split(separator: "updated 1 item of e\n").last ?? "")
    }
    let plain = await changes("")
    #expect(plain.contains("move rows") && !plain.contains("delete"), "\(plain)")
    #expect(await changes(" | select squad = team, n") == plain)
    #expect(await changes(" | extend twice = n * 2") == plain)
    // A key computed anew identifies nothing: the groups are told apart whole.
    let recomputed = await changes(" | extend team = upper(team)")
    #expect(recomputed.contains("delete rows") && recomputed.contains("insert rows"), "\(recomputed)")
  }

  @Test("a reload after edits: no crash, and the batch undoes what the reload undid")
  func reloadAfterEdits() async throws {
    let (_, output, ok) = await run(
      Self.people + """
        let t = table (e | sort by age) with cell basic "{name} {age}"
        watch t
        insert into e {id: 11, name: "N", age: 99}
        update e set age = 99 where id == 7
        reload e
        changes t
        """)
    #expect(ok, "\(output.errors)")
    // The reload takes the inserted row away and puts row 7 back where its age was.
    #expect(
      output.text.contains(
        "t: delete rows [0, 10]\n   move rows [0, 9]→[0, 0]\n   then reload rows [0, 0]\n"),
      "\(output.text)")
    #expect(output.text.hasSuffix("t: no changes\n"), "\(output.text)")
  }

  @Test("a placeholder whose message changes (empty, then failed) is reloaded in the batch")
  func placeholderInBatch() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dsh-placeholder-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("empty.csv")
    try "name\n".write(to: file, atomically: true, encoding: .utf8)
    let (session, output, ok) = await run(
      """
      let p = csv "\(file.path)"
      let t = table p with cell basic "{name}" | placeholder empty "No one yet" error "Could not load"
      watch t
      """)
    #expect(ok, "\(output.errors)")
    try FileManager.default.removeItem(at: file)
    await run("reload p", in: session)
    #expect(output.text.contains("t: reload placeholders of sections 0\n"), "\(output.text)")
  }

  @Test("where KEY == null finds the rows without a key, as a scan does")
  func nullKey() async throws {
    let (_, output, ok) = await run(
      Self.people + """
        insert into e {name: "NoKey", team: "Research"}
        update e set name = "Z" where id == null
        delete from e where id == null
        """)
    #expect(ok, "\(output.errors)")
    #expect(output.text.contains("updated 1 item of e"), "\(output.text)")
    #expect(output.text.contains("deleted 1 item from e"), "\(output.text)")
  }
}
