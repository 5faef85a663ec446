import Foundation
import Testing

/// Views that must never be wrong or stale: reloads of a base, saved sessions replayed from
/// elsewhere, scripts run from another folder, input that arrives a line at a time.
@Suite("Views stay true", .serialized)
struct TrueViewTests {
  let folder = NSTemporaryDirectory() + "dsh-true-views-\(UUID().uuidString)"

  init() throws {
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
  }

  func write(_ text: String, to name: String) throws {
    try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
  }

  @Test("piped input runs each statement as it arrives")
  func streaming() throws {
    let dsh = try DSHStream()
    dsh.send("show [1] as csv")
    // Answered before the pipe is closed or the next line is written.
    #expect(dsh.waitFor("value\n1\n") != nil)
    dsh.send("show [2,")
    dsh.send("  3] as csv")
    #expect(dsh.waitFor("value\n2\n3\n") != nil)
    #expect(dsh.finish() == 0)
  }

  @Test("reload of a base reaches every view built on it: failure, recovery, empty and back")
  func reloadOfBase() throws {
    let penguins = "species,island\nAdelie,Torgersen\nGentoo,Biscoe\nChinstrap,Dream\nAdelie,Biscoe\n"
    try write(penguins, to: "pg.csv")
    let dsh = try DSHStream()
    dsh.send("let pg = csv \"\(folder)/pg.csv\"")
    dsh.send(
      "let t = table pg | section by island with cell basic \"{species}\" "
        + "| placeholder empty \"none\" error \"failed: {error}\"")
    dsh.send("let c = compose (table [\"Menu\"] with cell basic \"{.}\"), t")
    dsh.send("watch t")
    dsh.send("show t rows 0..2 as plain")
    #expect(dsh.waitFor("Gentoo") != nil)

    try FileManager.default.moveItem(atPath: folder + "/pg.csv", toPath: folder + "/away.csv")
    dsh.send("reload pg")
    let failed = dsh.waitFor("delete sections")
    #expect(failed?.contains("no such file") == true, "\(failed ?? "")")
    dsh.send("show t as plain")
    #expect(dsh.waitFor("failed: no such file") != nil)
    dsh.send("describe t")
    #expect(dsh.waitFor("section by island  (error)") != nil)
    dsh.send("show 1001")
    #expect(dsh.waitFor("1001\n") != nil)
    dsh.send("show c as plain")
    let composed = dsh.waitFor("failed: no such file")
    #expect(composed?.contains("Menu") == true)

    try "species,island\n".write(toFile: folder + "/pg.csv", atomically: true, encoding: .utf8)
    dsh.send("reload pg")
    dsh.send("show t as plain")
    #expect(dsh.waitFor("none") != nil)

    try write("species,island\nEmperor,Ross\n", to: "pg.csv")
    dsh.send("reload pg")
    let recovered = dsh.waitFor("insert sections")
    #expect(recovered != nil, "\(recovered ?? "")")
    dsh.send("show t as plain")
    let shown = dsh.waitFor("Emperor")
    #expect(shown?.contains("none") == false)
    #expect(shown?.contains("failed") == false)
    dsh.send("describe t")
    #expect(dsh.waitFor("loaded") != nil)
    _ = dsh.finish()
  }

  @Test("a saved session replays with its edits, switch and pages, from any folder")
  func saveReplaysEverything() throws {
    let session = """
      let people = csv "Scripts/data/people.csv" key id
      let adults = people | where age >= 40 | sort by name
      insert into people {id: 11, name: "Barbara Liskov", email: "barbara@example.com", team: "Research", age: 86, active: true, joined: "2024-01-02"}
      update people set team = "Design" where id == 3
      delete from people where id == 7
      move people from 0 to 2
      let feed = paged range 0..10 size 4
      more feed
      let tabs = segmented all: (table people with cell basic "{name}"), grown: (table adults with cell basic "{name}")
      switch tabs to grown
      save "\(folder)/saved/session.dsh"
      """
    try FileManager.default.createDirectory(atPath: folder + "/saved", withIntermediateDirectories: true)
    let shows =
      "show 424242\nshow people as csv\nshow adults as csv\nshow feed as csv\nshow tabs as plain\n"
    let original = try DSHProcess.run(["-c", session + "\n" + shows])
    #expect(original.status == 0, "\(original.output)")
    #expect(original.output.contains("saved 4 bindings"))
    // The saved script, run from another folder, shows the same thing for every binding.
    let replayed = try DSHProcess.run(
      [folder + "/saved/session.dsh", "-c", shows], directory: NSTemporaryDirectory())
    #expect(replayed.status == 0, "\(replayed.output)")
    let originalShows = original.output.components(separatedBy: "424242\n").last
    let replayedShows = replayed.output.components(separatedBy: "424242\n").last
    #expect(originalShows == replayedShows)
    #expect(originalShows?.contains("Barbara Liskov") == true)
    #expect(originalShows?.contains("Hopper, Jr.") == false)
    let script = try String(contentsOfFile: folder + "/saved/session.dsh", encoding: .utf8)
    #expect(script.contains("csv \"../../"))
  }

  @Test("paths in a script resolve against its own folder; typed paths against the working directory")
  func scriptRelativePaths() throws {
    try FileManager.default.createDirectory(atPath: folder + "/screens", withIntermediateDirectories: true)
    try write("n\n1\n2\n", to: "screens/numbers.csv")
    try write("let numbers = csv \"numbers.csv\"\nshow numbers as csv\n", to: "screens/screen.dsh")
    try write("source \"screen.dsh\"\n", to: "screens/outer.dsh")
    let direct = try DSHProcess.run([folder + "/screens/screen.dsh"], directory: "/")
    #expect(direct.output == "n\n1\n2\n")
    let sourced = try DSHProcess.run([folder + "/screens/outer.dsh"], directory: "/")
    #expect(sourced.output == "n\n1\n2\n")
    let typed = try DSHProcess.run(["-c", "show csv \"screens/numbers.csv\" as csv"], directory: folder)
    #expect(typed.output == "n\n1\n2\n")
  }

  @Test(
    "a view over a database whose file went away shows the failure instead of reading rows it no longer has")
  func reloadOfDatabase() throws {
    try FileManager.default.copyItem(
      atPath: DSHProcess.packageRoot + "/Scripts/data/people.db", toPath: folder + "/people.db")
    let dsh = try DSHStream()
    dsh.send("let db = sqlite \"\(folder)/people.db\" table people key id")
    // upper() is not said in SQL (SQLite's folds ASCII only): this stage runs in memory, over
    // db itself. (A condition SQL can say would run in a provider of its own, which `reload t`
    // reaches and `reload db` does not.)
    dsh.send("let old = db | where upper(name) != \"\" | sort by name")
    dsh.send("let t = table old with cell basic \"{name}\" | placeholder error \"failed: {error}\"")
    dsh.send("watch t")
    dsh.send("show t as plain")
    #expect(dsh.waitFor("Katherine Johnson") != nil)
    try FileManager.default.removeItem(atPath: folder + "/people.db")
    dsh.send("reload db")
    // The placeholder's section is not the rows' section (as the engine's SectionID says): the
    // one goes and the other comes.
    #expect(dsh.waitFor("t: delete sections 0\n   insert sections 0") != nil)
    dsh.send("show t as plain")
    #expect(dsh.waitFor("failed: no such file") != nil)
    #expect(dsh.finish() == 1)
  }

  @Test("a change made through a name that is bound again later is still saved")
  func saveThroughAlias() throws {
    let session = """
      let a = [1, 2, 3]
      let b = a
      insert into b 4
      let b = [9]
      let s = csv "samples:people.csv"
      save "\(folder)/alias.dsh"
      """
    let original = try DSHProcess.run(["-c", session])
    #expect(original.status == 0, "\(original.output)")
    let script = try String(contentsOfFile: folder + "/alias.dsh", encoding: .utf8)
    // The sample data is named the same way on every machine.
    #expect(script.contains("csv \"samples:people.csv\""))
    let replayed = try DSHProcess.run([folder + "/alias.dsh", "-c", "show a as csv\nshow b as csv"])
    #expect(replayed.output.hasSuffix("value\n1\n2\n3\n4\nvalue\n9\n"), "\(replayed.output)")
  }
}
