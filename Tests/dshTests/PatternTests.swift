import Foundation
import Testing

/// like, ilike, starts with, ends with and matches against Python's own matching of the same
/// strings and patterns (LIKE turned into a regular expression, as DuckDB defines it: `%` any
/// characters, `_` one, the whole text), from a CSV file and from SQLite.
@Suite("Patterns against Python")
struct PatternTests {
  @Test("random texts and patterns give Python's answers, in memory and from SQLite")
  func matchesPython() throws {
    var generator = SystemRandomNumberGenerator()
    let alphabet: [Character] = ["a", "b", "A", "é", "_", "%", " "]
    func word(_ length: ClosedRange<Int>) -> String {
      String(
        (0..<Int.random(in: length, using: &generator)).map { _ in alphabet.randomElement(using: &generator)!
        })
    }
    let folder = NSTemporaryDirectory() + "dsh-patterns-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let rows = (0..<300).map { id in (id, word(0...6), word(0...4)) }
    func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
    try ("id,t,p\n" + rows.map { "\($0.0),\(quoted($0.1)),\(quoted($0.2))" }.joined(separator: "\n") + "\n")
      .write(
        toFile: folder + "/rows.csv", atomically: true, encoding: .utf8)
    let made = try DSHProcess.runCommand(
      [
        "/usr/bin/env", "python3", "-c",
        """
        import csv, re, sqlite3, sys
        folder = sys.argv[1]
        rows = list(csv.DictReader(open(folder + '/rows.csv', newline='', encoding='utf-8')))
        db = sqlite3.connect(folder + '/rows.db')
        db.execute('CREATE TABLE r (id INTEGER PRIMARY KEY, t TEXT, p TEXT)')
        db.executemany('INSERT INTO r VALUES (?, ?, ?)', [(int(r['id']), r['t'], r['p']) for r in rows])
        db.commit()
        def like(t, p, fold=False):
            if fold: t, p = t.lower(), p.lower()
            rx = ''.join('.*' if c == '%' else '.' if c == '_' else re.escape(c) for c in p)
            return re.fullmatch(rx, t, re.S) is not None
        with open(folder + '/expected.txt', 'w', encoding='utf-8') as out:
            for r in rows:
                t, p = r['t'], r['p']
                out.write(f"{r['id']}:{like(t, p)}:{like(t, p, True)}:{t.startswith(p)}:{t.endswith(p)}:{re.search('a[b_]', t) is not None}\\n")
        """,
        folder,
      ], directory: folder)
    #expect(made.status == 0, "\(made.output)")
    let expected = try String(contentsOfFile: folder + "/expected.txt", encoding: .utf8)
    let select =
      "extend l = t like p, i = t ilike p, s = t starts with p, e = t ends with p, m = t matches \"a[b_]\" | select id, l, i, s, e, m"
    for source in [
      "csv \"\(folder)/rows.csv\" types {t: text, p: text}", "sqlite \"\(folder)/rows.db\" table r",
    ] {
      let result = try DSHProcess.run(["-c", "show \(source) | sort by id | \(select) as csv"])
      #expect(result.status == 0, "\(result.output)")
      let got = result.output.split(separator: "\n").dropFirst().map {
        $0.replacingOccurrences(of: ",", with: ":")
      }
      let want = expected.split(separator: "\n").map {
        $0.replacingOccurrences(of: "True", with: "true").replacingOccurrences(of: "False", with: "false")
      }
      #expect(got.count == want.count, "\(source): \(result.output.prefix(500))")
      for (ours, theirs) in zip(got, want) where ours != theirs {
        Issue.record("\(source): dsh \(ours), Python \(theirs)")
      }
    }
  }
}
