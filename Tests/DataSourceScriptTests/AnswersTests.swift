import DataSourceKit
import DataSourceKitValues
import Foundation
import Testing

@testable import DataSourceScript

/// Aggregates in templates, `group by`, `join` and `export` through the language: what the user
/// types and what they get, errors included.
@Suite("Answers: aggregates, grouping, joins, export")
@MainActor
struct AnswersTests {
  func folder() throws -> String {
    let folder = NSTemporaryDirectory() + "answers-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
  }

  @Test("a median, a list or a distinct keeps at most its limit of values, then is null with a note")
  func keptValuesBounded() async throws {
    // The limit is 100,000,000; lowered here for this test's work alone (a task-local).
    let (_, output, ok) = await AggregateAccumulator.$maximumKeptValues.withValue(10) {
      await run(
        """
        show range 0..22 | extend g = . % 2, v = . | group by g with m = median(v), l = list(v), n = count() as csv
        show range 0..8 | extend g = . % 2, v = . | group by g with m = median(v) as csv
        """)
    }
    #expect(ok, "\(output.errors)")
    #expect(output.text.contains("g,m,l,n\n0,,,11\n1,,,11\n"), "\(output.text)")
    #expect(output.text.contains("g,m\n0,3.0\n1,4.0\n"), "\(output.text)")
    #expect(
      output.errors.contains(
        "median(v) keeps every value, and met more than the 10 it may keep: it gave null 2 times"),
      "\(output.errors)")
  }

  @Test("a footer's totals follow an edit, and the batch reloads exactly the footers that changed")
  func footersFollowEdits() async {
    let (session, output, ok) = await run(
      """
      let p = csv "Scripts/data/people.csv" key id
      let t = table (p | section by team) with cell basic "{name}" | footer "{count}: {sum(age)} years, {min(joined)}" | title "{sum(age)} in all"
      show t as json
      update p set age = age + 1 where name == "Alan Turing"
      changes t as json
      """)
    #expect(ok, "\(output.errors)")
    // Research is the third section; its footer and the title change, the others do not.
    #expect(output.text.contains("\"footer\": \"3: 124 years, 2014-05-05\""), "\(output.text)")
    #expect(output.text.contains("\"reloadedFooters\": [2]"), "\(output.text)")
    #expect(
      output.text.contains("\"reloadedHeaders\": [0]") || output.text.contains("\"reloadedHeaders\": []"))
    let after = await printedText("show t rows 0..1", in: session)
    #expect(after.contains("377 in all"), "\(after)")
  }

  @Test("aggregates where one item is computed, nested, or over text are errors at the hole")
  func aggregateErrors() async {
    for (statement, message) in [
      ("show table p with cell basic \"{sum(age)}\"", "sum is an aggregate of many items"),
      // In extend an aggregate covers the other items (a window); in a where it cannot.
      ("show p | where age > avg(age)", "avg is an aggregate of many items"),
      (
        "show table p with cell basic \"{name}\" | footer \"{sum(max(age))}\"",
        "max(age) is an aggregate inside sum"
      ),
      ("show table p with cell basic \"{name}\" | footer \"{avg(name)}\"", "avg does not take name (text)"),
      (
        "show table p with cell basic \"{name}\" | footer \"{count(a, b)}\"",
        "wrong number of arguments to count"
      ),
      (
        "show (compose (table p with cell basic \"{name}\"), (table p with cell basic \"{name}\")) | footer \"{sum(age)}\"",
        "sum(age) needs the items of one table"
      ),
      ("show p | group by age + 1 with n = count()", "a key that is not a field needs a name"),
      // distinct's one expression gives its values (no name); one of several is a field.
      ("show p | distinct age + 1, team", "a key that is not a field needs a name"),
      ("show p | group by team, team with n = count()", "team"),
      ("show p | join p on id == name as me", "cannot compare id (int) with name (text)"),
      // Keys written alike are told apart by their sides.
      (
        "show p | join [{id: \"x\"}] on id == id as o",
        "cannot compare id (int) of p with id (text) of [{id: \"x\"}]"
      ),
      ("show p | join 3 on id == id as me", "a provider to join"),
      ("show p | group by team with n = count(*)", "count(*) is written count() here"),
      ("show p | group by team with n = sum(max(age))", "max(age) is an aggregate inside sum"),
      ("export p to \"x.csv\" as tsv", "unknown export format 'tsv'; did you mean 'csv'?"),
      ("export p \"x.csv\"", "expected 'to \"PATH\"'"),
      ("show p | join p on id > id as me", "expected 'on LEFT == RIGHT'"),
      ("show p | join p on id == id", "expected 'as NAME' for the matched item"),
      ("show p | group by team with n = mean(age)", "unknown aggregate 'mean'"),
      ("show p | offset -1", "offset must be zero or more, not -1"),
      ("show p | offset x", "expected a number of items after 'offset'"),
      ("show p | ofset 2", "unknown stage 'ofset'; did you mean 'offset'?"),
      ("show p | group by team with m = median(name)", "median does not take name (text)"),
      (
        "show p | group by team with count()",
        "an aggregate after with names the field it makes, as in: with n = count()"
      ),
      ("export p to \"/tmp\"", "cannot write '/tmp': it is a folder; name a file in it, as '/tmp/data.csv'"),
    ] {
      let (_, output, ok) = await run("let p = csv \"Scripts/data/people.csv\"\n" + statement)
      #expect(!ok, "\(statement)")
      #expect(output.errors.contains(message), "\(statement): \(output.errors)")
      #expect(output.errors.contains("test.dsh:2:"), "\(output.errors)")
    }
  }

  @Test("a field named like a stage word is a field outside the stage's place: offset-1 subtracts")
  func stageWordsAsFields() async {
    let (_, output, ok) = await run(
      "show [{offset: 5, limit: 2}] | extend y = offset-1, z = limit*2 | offset 0 | limit 1 as csv")
    #expect(ok, "\(output.errors)")
    #expect(output.text == "offset,limit,y,z\n5,2,4,4\n", "\(output.text)")
    // After `|` the word is the stage, and a negative count its error.
    let (_, negative, refused) = await run("show [1, 2] | offset -1")
    #expect(!refused)
    #expect(negative.errors.contains("offset must be zero or more, not -1"), "\(negative.errors)")
  }

  @Test("group by, join and distinct agree with a hand count of the sample people")
  func answersByHand() async {
    let (_, output, ok) = await run(
      """
      let p = csv "Scripts/data/people.csv" key id
      let teams = json "Scripts/data/teams.json" at "teams"
      show p | group by active with n = count(), names = list(name) as json
      show p | join teams on team == name as t inner | group by t.floor as floor with n = count() | sort by floor as csv
      show p | distinct team | sort by . as csv
      """)
    #expect(ok, "\(output.errors)")
    // active: 7 true, 2 false (Alan, Hopper Jr.), 1 null (Margaret): first seen true, false, null.
    #expect(output.text.contains("{\"active\": true, \"n\": 7,"), "\(output.text)")
    #expect(
      output.text.contains("{\"active\": false, \"n\": 2, \"names\": [\"Alan Turing\", \"Hopper, Jr.\"]}"))
    #expect(output.text.contains("{\"active\": null, \"n\": 1, \"names\": [\"Margaret Hamilton\"]}"))
    // Floors: Design 1 (2 people), Engineering 2 (4), Research 3 (3); Hopper Jr. has no team.
    #expect(output.text.contains("floor,n\n1,2\n2,4\n3,3\n"), "\(output.text)")
    #expect(output.text.contains("value\nDesign\nEngineering\nResearch\n\n"), "\(output.text)")
  }

  @Test(
    "a key's `as NAME` names it, show's own `as csv` at the end is not taken for a name, and distinct's one expression needs none"
  )
  func keyNamesAndShowModes() async {
    let (_, output, ok) = await run(
      """
      let p = csv "Scripts/data/people.csv"
      show p | distinct team, active | limit 2 as csv
      show p | distinct team as csv
      show p | distinct team as kind | sort by kind | limit 1 as csv
      show p | distinct lower(team) | sort by . | limit 2 as csv
      show [3, 1, 3] | distinct . as csv
      """)
    #expect(ok, "\(output.errors)")
    #expect(
      output.text == "team,active\nResearch,true\nEngineering,true\n"
        + "value\nResearch\nEngineering\nDesign\n\n" + "kind\nDesign\n" + "value\ndesign\nengineering\n"
        + "value\n3\n1\n", "\(output.text)")
  }

  @Test("save writes the path of a file a join reads relative to the saved script, as it writes the source's")
  func saveRewritesJoinedFilePaths() async throws {
    let folder = NSTemporaryDirectory() + "dsh-save-join-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder + "/deeper", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let (_, output, ok) = await run(
      """
      let m = csv "Scripts/data/people.csv" | join (csv "Scripts/data/states.csv") on team == name as t
      save "\(folder)/deeper/s.dsh"
      """)
    #expect(ok, "\(output.errors)")
    let script = try String(contentsOfFile: folder + "/deeper/s.dsh", encoding: .utf8)
    #expect(!script.contains("\"Scripts/data/"), "\(script)")
    let replay = await run("source \"\(folder)/deeper/s.dsh\"\nshow m | limit 1 as csv")
    #expect(replay.ok, "\(replay.output.errors)")
  }

  @Test("export writes whole files in each format, relative to the script, never over a folder")
  func export() async throws {
    let folder = try folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let script = folder + "/write.dsh"
    try """
    let p = csv "\(FileManager.default.currentDirectoryPath)/Scripts/data/people.csv"
    export p | where age > 45 | select name, age to "old.csv"
    export p | where age > 45 | select name, age to "old.jsonl"
    export p | where age > 45 | select name, age to "old.md"
    export p | where age > 45 | select name, age to "old.data" as json
    export table p with cell value1 "{name}" detail "{age}" | header "Old" to "old.html"
    """.write(toFile: script, atomically: true, encoding: .utf8)
    let (session, output, ok) = await run("source \"\(script)\"")
    #expect(ok, "\(output.errors)")
    func read(_ name: String) -> String {
      (try? String(contentsOfFile: folder + "/" + name, encoding: .utf8)) ?? "missing"
    }
    #expect(read("old.csv") == "name,age\nKatherine Johnson,52\n\"Edsger \"\"EWD\"\" Dijkstra\",47\n")
    #expect(
      read("old.jsonl")
        == "{\"name\": \"Katherine Johnson\", \"age\": 52}\n{\"name\": \"Edsger \\\"EWD\\\" Dijkstra\", \"age\": 47}\n"
    )
    #expect(
      read("old.md").hasPrefix("| name | age |\n| --- | ---: |\n| Katherine Johnson | 52 |"),
      "\(read("old.md"))")
    // A file export of records is the records: what dsh's json, DuckDB and pandas read back.
    #expect(
      read("old.data")
        == "[\n  {\"name\": \"Katherine Johnson\", \"age\": 52},\n  {\"name\": \"Edsger \\\"EWD\\\" Dijkstra\", \"age\": 47}\n]\n",
      "\(read("old.data"))")
    let page = read("old.html")
    #expect(page.hasPrefix("<!DOCTYPE html>"))
    #expect(page.contains("<div class=\"header\">Old</div>"))
    #expect(
      page.contains(
        "<div class=\"content value1\"><span class=\"text\">Katherine Johnson</span><span class=\"detail\">52</span></div>"
      ))
    // A folder, a missing folder, an unknown extension: errors, and nothing written.
    try FileManager.default.createDirectory(atPath: folder + "/dir.csv", withIntermediateDirectories: true)
    try "keep\n".write(toFile: folder + "/keep.csv", atomically: true, encoding: .utf8)
    for (statement, message) in [
      ("export p to \"\(folder)/dir.csv\"", "dir.csv"),
      ("export p to \"\(folder)/none/x.csv\"", "no such folder"),
      ("export p to \"\(folder)/x.txt\"", "cannot tell the format"),
      ("export p | where nope > 1 to \"\(folder)/keep.csv\"", "no field 'nope'"),
    ] {
      let failed = await printed("let p = csv \"Scripts/data/people.csv\"\n" + statement, in: session)
      #expect(failed.errors.contains(message), "\(statement): \(failed.errors)")
    }
    #expect(read("keep.csv") == "keep\n")
    let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    #expect(
      names == ["dir.csv", "keep.csv", "old.csv", "old.data", "old.html", "old.jsonl", "old.md", "write.dsh"])
  }

  func printedText(_ text: String, in session: Session) async -> String {
    await printed(text, in: session).text
  }

  func printed(_ text: String, in session: Session) async -> (text: String, errors: String) {
    guard let output = session.output as? CapturedOutput else { return ("", "no captured output") }
    let (textStart, errorStart) = (output.text.count, output.errors.count)
    _ = await run(text, in: session)
    return (String(output.text.dropFirst(textStart)), String(output.errors.dropFirst(errorStart)))
  }
}
