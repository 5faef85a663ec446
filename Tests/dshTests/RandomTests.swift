import Foundation
import Testing

/// `random([seed])` in `extend`: values from 0 up to 1, spread evenly, drawn once per item (so
/// a view keeps them through edits and every read of them agrees), the same again for a seed.
@Suite("random()")
struct RandomTests {
  /// dsh's CSV answer to the statements, header and all, as lines.
  func lines(_ statements: [String]) throws -> [String] {
    let ran = try DSHProcess.run(statements.flatMap { ["-c", $0] })
    #expect(ran.status == 0, "\(ran.output)")
    return ran.output.split(separator: "\n").map(String.init)
  }

  @Test("values from 0 up to 1, spread evenly over ten buckets (χ² under the 0.1% bound), seed by seed")
  func uniform() throws {
    for seed in [1, 2, 3, 42, -7] {
      let counts = try lines([
        "show range 1..20000 | extend r = random(\(seed)) | group by int(r * 10) as b with n = count() | sort by b as csv"
      ])
      .dropFirst().map { $0.split(separator: ",").map(String.init) }
      #expect(counts.map { $0[0] } == (0..<10).map(String.init), "seed \(seed): \(counts)")
      let chiSquare = counts.reduce(0.0) { sum, row in
        let n = Double(row[1]) ?? 0
        return sum + (n - 2_000) * (n - 2_000) / 2_000
      }
      // 27.88 is the 99.9th percentile of χ² with 9 degrees of freedom.
      #expect(chiSquare < 27.88, "seed \(seed): χ² = \(chiSquare), \(counts)")
    }
  }

  @Test("a seed draws the same values in another run; without one each run draws anew")
  func seeds() throws {
    let seeded = "show range 1..50 | extend r = random(11) | select r as csv"
    #expect(try lines([seeded]) == lines([seeded]))
    let unseeded = "show range 1..50 | extend r = random() | select r as csv"
    #expect(try lines([unseeded]) != lines([unseeded]))
    #expect(try lines([seeded]) != lines(["show range 1..50 | extend r = random(12) | select r as csv"]))
  }

  @Test("an item keeps its value through edits of the table under the view, and sorts by it")
  func keptThroughEdits() throws {
    let answer = try lines([
      "let p = csv \"Scripts/data/people.csv\" key id",
      "let v = p | extend r = random() | select id, r",
      "show v as csv",
      "update p set age = 1 where id == 2",
      "insert into p {id: 0, name: \"Zed\"}",
      "delete from p where id == 5",
      "show v as csv",
      "show v | sort by r as csv",
    ])
    let blocks = answer.split { $0 == "id,r" }.map { $0.filter { $0.first?.isNumber == true } }
    try #require(blocks.count == 3, "\(answer)")
    func values(_ block: [String]) -> [String: Double] {
      Dictionary(
        uniqueKeysWithValues: block.map { line in
          let parts = line.split(separator: ",")
          return (String(parts[0]), Double(parts[1]) ?? -1)
        })
    }
    let before = values(blocks[0])
    let after = values(blocks[1])
    #expect(before.count == 10 && after.count == 10)
    for (id, value) in after where id != "0" { #expect(before[id] == value, "id \(id)") }
    #expect(after["5"] == nil && after["0"].map { $0 >= 0 && $0 < 1 } == true)
    let sorted = blocks[2].map { Double($0.split(separator: ",")[1]) ?? -1 }
    #expect(sorted == sorted.sorted() && sorted.count == 10)
  }

  @Test(
    "random() outside extend, or with a seed that is not a whole number, is refused with the way to write it")
  func refusals() throws {
    let outside = try DSHProcess.run(["-c", "show range 1..9 | where random() < 0.5"])
    #expect(outside.status != 0)
    #expect(outside.output.contains("extend r = random(), then | where r < 0.1"), "\(outside.output)")
    let seed = try DSHProcess.run(["-c", "show range 1..9 | extend r = random(0.5)"])
    #expect(seed.status != 0)
    #expect(seed.output.contains("as its seed (a whole number"), "\(seed.output)")
    let swift = try DSHProcess.run([
      "-c", "let t = table (range 1..9 | extend r = random(1)) with cell basic \"{r}\"", "-c",
      "show t as swift",
    ])
    #expect(swift.status != 0 && swift.output.contains("random()"), "\(swift.output)")
    // An order or a section would be ignored: random() draws per item.
    let ordered = try DSHProcess.run(["-c", "show range 1..9 | extend r = random(42) by value"])
    #expect(ordered.status != 0)
    #expect(ordered.output.contains("change nothing in r: write extend r = random(42)"), "\(ordered.output)")
    #expect(ordered.output.contains("1:41: error"), "\(ordered.output)")
  }

  @Test("a negative seed is a seed: the same values every run, other than its positive twin's")
  func negativeSeed() throws {
    let negative = "show range 1..20 | extend r = random(-7) | select r as csv"
    #expect(try lines([negative]) == lines([negative]))
    #expect(try lines([negative]) != lines(["show range 1..20 | extend r = random(7) | select r as csv"]))
  }

  @Test("save writes the seed random() drew, so its script replays the same values")
  func savedSeed() throws {
    let folder = NSTemporaryDirectory() + "dsh-random-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let people = FileManager.default.currentDirectoryPath + "/Scripts/data/people.csv"
    let shown = "show v | select id, r, s, n as csv"
    let before = try lines([
      "let p = csv \"\(people)\" key id",
      "let v = p | extend r = random(), s = round(random( ) * 100, 3) | sort by r"
        + " | join (csv \"\(people)\" key id) on id == id as m | extend n = m.name",
      shown, "export p | extend w = random() | select id, w to \"\(folder)/w.csv\"",
      "save \"\(folder)/saved.dsh\" with exports",
    ])
    let exported = try String(contentsOfFile: folder + "/w.csv", encoding: .utf8)
    let script = try String(contentsOfFile: folder + "/saved.dsh", encoding: .utf8)
    #expect(!script.contains("random()") && !script.contains("random( )"), "\(script)")
    // The path after the calls, moved along by the seeds, still written relative to the script.
    #expect(script.contains("| join (csv \"../"), "\(script)")
    let again = try DSHProcess.run([folder + "/saved.dsh", "-c", shown])
    #expect(again.status == 0, "\(again.output)")
    #expect(
      // The replayed script prints its export's line first.
      before.dropLast(2) == again.output.split(separator: "\n").map(String.init).dropFirst(),
      "\(again.output)")
    // The export, replayed, wrote the same values.
    #expect(try String(contentsOfFile: folder + "/w.csv", encoding: .utf8) == exported)
  }

  @Test("over a CSV file checked from its first rows, save writes the one seed the rows were drawn with")
  func savedSeedOverALargeFile() throws {
    let folder = NSTemporaryDirectory() + "dsh-random-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // Over 1 MB: each statement over it is checked against its header and first rows first.
    var text = "id,name\n"
    for i in 0..<60_000 { text += "\(i),person number \(i)\n" }
    try text.write(toFile: folder + "/big.csv", atomically: true, encoding: .utf8)
    let shown = "show s as csv"
    let before = try lines([
      "let s = csv \"\(folder)/big.csv\" | extend r = random() | limit 3", shown,
      "export csv \"\(folder)/big.csv\" | extend w = random() | limit 2 to \"\(folder)/w.csv\"",
      "save \"\(folder)/saved.dsh\" with exports",
    ])
    let exported = try String(contentsOfFile: folder + "/w.csv", encoding: .utf8)
    let script = try String(contentsOfFile: folder + "/saved.dsh", encoding: .utf8)
    // One seed a call, written once: random(N), nothing after it.
    let calls = script.components(separatedBy: "random(").dropFirst()
    #expect(calls.count == 2, "\(script)")
    #expect(
      calls.allSatisfy { $0.prefix { $0 != ")" }.allSatisfy { $0.isNumber || $0 == "-" } }, "\(script)")
    let again = try DSHProcess.run([folder + "/saved.dsh", "-c", shown])
    #expect(again.status == 0, "\(again.output)")
    #expect(
      before.dropLast(2).suffix(4) == again.output.split(separator: "\n").map(String.init).suffix(4),
      "\(again.output)")
    #expect(try String(contentsOfFile: folder + "/w.csv", encoding: .utf8) == exported)
  }
}
