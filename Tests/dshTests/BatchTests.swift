import Foundation
import Synchronization
import Testing

@Suite("Batch mode")
struct BatchTests {
  @Test("a pipe on standard input is read as a script, named <stdin> in errors")
  func stdinScript() throws {
    let result = try DSHProcess.run([], input: "let a = [1, 2]\na\nshow b\n")
    #expect(result.status == 1)
    #expect(
      result.output == """
        a: array provider · 2 items in 1 section · loaded
        <stdin>:3:6: error: no binding named 'b'
        show b
             ^

        """)
  }

  @Test("a data file as the argument is opened under its file's name and shown; other files are refused")
  func dataFileArgument() throws {
    let folder = NSTemporaryDirectory() + "dsh-open-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try "n\tcity\n1\tOslo\n".write(toFile: folder + "/my towns.tsv", atomically: true, encoding: .utf8)
    try "{\"a\": 1}\n{\"a\": 2}\n".write(toFile: folder + "/table.jsonl", atomically: true, encoding: .utf8)
    try "a,b\n".write(toFile: folder + "/notes.txt", atomically: true, encoding: .utf8)

    // With nothing else to run, the file is shown; with -c (as `duckdb FILE -c …`) or statements
    // piped in (as `… | sqlite3 FILE`), only their answers print.
    let shown = try DSHProcess.run(["Scripts/data/people.csv"])
    #expect(shown.status == 0)
    #expect(shown.output.hasPrefix("┌────┬"), "\(shown.output)")
    let csv = try DSHProcess.run(["Scripts/data/people.csv", "-c", "show people | where id == 1 as csv"])
    #expect(csv.status == 0)
    #expect(
      csv.output
        == "id,name,email,team,age,active,joined\n1,Ada Lovelace,ada@example.com,Research,36,true,2019-03-01\n",
      "\(csv.output)")
    let piped = try DSHProcess.run(
      ["Scripts/data/people.csv"], input: "show people | where id == 2 | select name as csv\n")
    #expect(piped.output == "name\nGrace Hopper\n", "\(piped.output)")
    // Names from the file's: a space becomes _, a word of the language gets _data.
    let tsv = try DSHProcess.run([folder + "/my towns.tsv", folder + "/table.jsonl", "-c", "vars"])
    #expect(!tsv.output.contains("│ Oslo │"), "\(tsv.output)")
    #expect(tsv.output.contains("my_towns: csv provider"), "\(tsv.output)")
    #expect(tsv.output.contains("table_data: json provider"), "\(tsv.output)")
    // A database says what it holds, and binds each table under its name.
    let db = try DSHProcess.run(["Scripts/data/people.db"])
    #expect(db.status == 0)
    #expect(db.output.contains("├─ people  10 rows: id integer, name text"), "\(db.output)")
    #expect(db.output.contains("bound: people, teams (show people, describe people)\n"), "\(db.output)")
    let tables = try DSHProcess.run(["Scripts/data/people.db"], input: "show teams | limit 1 as csv\n")
    #expect(tables.output == "name,floor\nResearch,3\n", "\(tables.output)")
    // A database, an archive or a Parquet file, compressed, is to be unpacked first.
    let packed = try DSHProcess.run([folder + "/shop.db.gz", folder + "/bundle.tar.gz"])
    #expect(packed.status == 1)
    #expect(
      packed.output.contains(
        "shop.db.gz' is a database, an archive or a Parquet file, compressed: decompress it first"),
      "\(packed.output)")
    #expect(packed.output.contains("bundle.tar.gz' is a database, an archive"), "\(packed.output)")
    let parquet = try DSHProcess.run([folder + "/rows.parquet.zst"])
    #expect(
      parquet.output.contains("rows.parquet.zst' is a database, an archive or a Parquet file"),
      "\(parquet.output)")
    let other = try DSHProcess.run([folder + "/notes.txt"])
    #expect(other.status == 1)
    #expect(
      other.output.contains("is neither a script (.dsh) nor a data file dsh opens (.csv"), "\(other.output)")
    let missing = try DSHProcess.run(["nowhere.csv"])
    #expect(missing.status == 1)
    #expect(missing.output.contains("no such file"), "\(missing.output)")
  }

  @Test("-c runs statements in order, after the scripts; errors name which -c when there are several")
  func commands() throws {
    let result = try DSHProcess.run(["Scripts/data/menu.dsh", "-c", "let n = 2", "-c", "n", "-c", "nn"])
    #expect(result.status == 1)
    #expect(result.output.hasPrefix("┌"))
    #expect(result.output.contains("│ Profile"))
    #expect(result.output.hasSuffix("n: 2\n-c#3:1:1: error: unknown command or name 'nn'\nnn\n^~\n"))
    let single = try DSHProcess.run(["-c", "show nope"])
    #expect(single.output.hasPrefix("-c:1:6: error: no binding named 'nope'"))
  }

  @Test(
    "a typo in the last stage is the error at its caret; explain runs no stage; explain analyze times each")
  func plansFromTheBinary() throws {
    let source = "csv \"samples:people.csv\" key id"
    let typo = try DSHProcess.run(["-c", "show \(source) | sort by name | section by team | where nme > 1"])
    #expect(typo.status == 1)
    #expect(typo.output.contains("error: no field 'nme' in csv \"samples:people.csv\"; did you mean 'name'?"))
    #expect(typo.output.contains("| where nme > 1\n") && typo.output.contains("^~~"), "\(typo.output)")

    let explained = try DSHProcess.run(["-c", "explain \(source) | where age > 30 | sort by name | limit 2"])
    #expect(explained.status == 0)
    #expect(
      explained.output.hasPrefix(
        "limit 2  (not run)  key id\n└─ sort by name  (not run)\n   └─ where age > 30  (not run)\n"),
      "\(explained.output)")

    let analyzed = try DSHProcess.run([
      "-c", "explain analyze \(source) | where age > 30 | sort by name | limit 2",
    ])
    #expect(analyzed.status == 0)
    #expect(
      analyzed.output.hasPrefix("limit 2  (1 section, 2 items, loaded)  key id\n"), "\(analyzed.output)")
    // Each step as it ran, its time masked: the source's 10 rows, 8 over 30, sorted, 2 kept.
    let steps =
      analyzed.output.components(separatedBy: "steps as they ran (time, rows after the step):\n").last ?? ""
    let masked = steps.replacingOccurrences(of: #"\d+\.\d{3} s"#, with: "T s", options: .regularExpression)
    #expect(
      masked == "  T s  10 rows  \(source)\n  T s   8 rows  where age > 30\n  T s   8 rows  sort by name\n"
        + "  T s   2 rows  limit 2\n", "\(analyzed.output)")
  }

  @Test("check exits 1 when UIKit refuses the batch, 0 when it accepts it, and says which either way")
  func checkExitStatus() throws {
    let refused = try DSHProcess.run(["-c", "check \"samples:crash-batch.json\" before [3, 2] after [4, 2]"])
    #expect(refused.status == 1, "\(refused.output)")
    #expect(refused.output.contains("UIKit refuses this batch"), "\(refused.output)")
    let accepted = try DSHProcess.run(["-c", "check \"samples:crash-batch.json\" before [3, 2] after [3, 3]"])
    #expect(accepted.status == 0, "\(accepted.output)")
    #expect(accepted.output.contains("UIKit accepts this batch"), "\(accepted.output)")
  }

  @Test("show … as html prints one page from the real binary, windowed, and export writes it")
  func htmlPage() throws {
    let page = try DSHProcess.run([
      "-c", "let p = csv \"Scripts/data/people.csv\" | sort by name | section by team",
      "-c",
      "show table p with cell subtitle \"{name}\" detail \"{email}\" | header \"{section} ({count})\" rows 0..3 as html",
    ])
    #expect(page.status == 0)
    #expect(page.output.hasPrefix("<!DOCTYPE html>"))
    #expect(page.output.hasSuffix("</html>\n"))
    #expect(page.output.contains("<div class=\"header\">Design (2)</div>"))
    #expect(page.output.contains("<div class=\"count\">10 rows (3 shown)</div>"))
    let whole = try DSHProcess.run(["-c", "show table [\"a\"] with cell basic \"{.}\" as html"])
    #expect(!whole.output.contains("class=\"count\""), "a table view shows no count: \(whole.output)")
    let path = NSTemporaryDirectory() + "dsh-page-\(UUID().uuidString).html"
    defer { try? FileManager.default.removeItem(atPath: path) }
    let export = try DSHProcess.run(["-c", "export table [\"a\"] with cell basic \"{.}\" to \"\(path)\""])
    #expect(export.status == 0)
    let written = try String(contentsOfFile: path, encoding: .utf8)
    #expect(written.contains("<div class=\"content basic\"><span class=\"text\">a</span></div>"))
  }

  @Test(
    "averages read as 41.33 on the screen and exactly in CSV; contains … ignoring case; {count|person|people}"
  )
  func numbersAndTextAsPeopleExpect() throws {
    let result = try DSHProcess.run([
      "-c", "let p = csv \"Scripts/data/people.csv\"",
      "-c", "show p | where team == \"Research\" | group by team with a = avg(age) as plain",
      "-c", "show p | where team == \"Research\" | group by team with a = avg(age) as csv",
      "-c", "show p | where name contains \"ADA\" ignoring case | select name as csv",
      "-c", "show p | where name contains \"ADA\" | select name as csv",
      "-c",
      "show table (p | where team != null | section by team) with cell basic \"{name}\" | footer \"{count|person|people}, {avg(age)}\" as plain",
      "-c",
      "show table (p | where id == 1) with cell basic \"{name}\" | footer \"{count|person|people}\" as plain",
      "-c", "show table [1] with cell basic \"{.|a|b|c}\"",
      "-c",
      "show table [{n: 'Ada'}] with cell basic \"{n + ':'} {n + '|x'} {coalesce(null, ')'):>3}\" as plain",
    ])
    #expect(result.output.contains("  Ada: Ada|x   )\n"), "\(result.output)")
    #expect(result.output.contains("team      a\nResearch  41.33\n"), "\(result.output)")
    #expect(result.output.contains("team,a\nResearch,41.333333333333336\n"), "\(result.output)")
    #expect(result.output.contains("name\nAda Lovelace\nname\n"), "\(result.output)")
    #expect(result.output.contains("\n3 people, 41.33\n"), "\(result.output)")
    #expect(result.output.contains("\n2 people, 31.0\n"), "\(result.output)")
    #expect(result.output.contains("  Ada Lovelace\n1 person\n"), "\(result.output)")
    #expect(
      result.output.contains("invalid format '|a|b|c'; a count's words are two, one and many"),
      "\(result.output)")
  }

  @Test("a bare provider draws as a picture with a default cell; the page adds no count and names CJK fonts")
  func providerPicture() throws {
    let result = try DSHProcess.run([
      "-c", "show csv \"Scripts/data/people.csv\" | limit 2 as html",
      "-c", "show [\"李小龍\"] as svg",
      "-c",
      "show table [\"a\", \"b\"] | section by . with cell basic \"{.}\" style insetGrouped | index as html",
    ])
    #expect(result.status == 0, "\(result.output)")
    #expect(
      result.output.contains(
        "<div class=\"content subtitle\"><span class=\"stack\"><span class=\"text\">Ada Lovelace</span><span class=\"detail\">ada@example.com</span></span></div>"
      ), "\(result.output)")
    #expect(!result.output.contains("class=\"count\""), "\(result.output)")
    #expect(!result.output.contains(" rows</text>"), "\(result.output)")
    #expect(result.output.contains(">李小龍</text>"), "\(result.output)")
    #expect(result.output.contains("'Noto Sans CJK SC'"), "\(result.output)")
    #expect(result.output.contains("\"Noto Sans CJK SC\", \"Noto Sans CJK JP\""), "\(result.output)")
    #expect(result.output.contains("Noto Color Emoji\", sans-serif"), "\(result.output)")
    #expect(result.output.contains("<div class=\"table insetGrouped has-index\">"), "\(result.output)")
  }

  @Test("the README's pictures are what dsh draws now (Scripts/pictures.sh draws them again)")
  func readmePicturesInStep() throws {
    let screen = try String(contentsOfFile: DSHProcess.packageRoot + "/Scripts/screen.dsh", encoding: .utf8)
    for (appearance, file) in [("light", "screen.svg"), ("dark", "screen-dark.svg")] {
      let drawn = try DSHProcess.run(
        ["-"], input: "set appearance \(appearance)\n" + screen + "show screen as svg\n")
      #expect(drawn.status == 0)
      let kept = try String(contentsOfFile: DSHProcess.packageRoot + "/docs/" + file, encoding: .utf8)
      #expect(drawn.output == kept, "docs/\(file) is out of date: run Scripts/pictures.sh")
    }
  }

  @Test("--bail stops at the first error")
  func bail() throws {
    let result = try DSHProcess.run(["--bail", "-c", "show x", "-c", "let a = 1; a"])
    #expect(result.status == 1)
    #expect(!result.output.contains("a: 1"))
    let goesOn = try DSHProcess.run(["-c", "show x", "-c", "let a = 1; a"])
    #expect(goesOn.output.contains("a: 1"))
  }

  @Test("exit status 0 when every statement succeeds")
  func success() throws {
    let result = try DSHProcess.run(["-c", "show [1] as csv"])
    #expect(result.status == 0)
    #expect(result.output == "value\n1\n")
  }

  @Test("quit stops reading; later statements do not run")
  func quit() throws {
    let result = try DSHProcess.run([], input: "let a = 1\nquit\nshow nothing\n")
    #expect(result.status == 0)
    #expect(result.output == "")
  }

  @Test("a missing script is an error, and the rest still run")
  func missingScript() throws {
    let result = try DSHProcess.run(["nope.dsh", "-c", "show [1] as csv"])
    #expect(result.status == 1)
    #expect(result.output == "dsh: error: no such file 'nope.dsh'\nvalue\n1\n")
  }

  @Test("--version and --help come from the argument parser")
  func versionAndHelp() throws {
    #expect(try DSHProcess.run(["--version"]).output == "0.1.0\n")
    let help = try DSHProcess.run(["--help"]).output
    #expect(
      help.contains("USAGE: dsh [<scripts> ...] [-c <text> ...] [--null <text> ...] [--bail] [--echo] [-i]"))
    let bad = try DSHProcess.run(["--frobnicate"])
    #expect(bad.status != 0)
    #expect(bad.output.contains("Unknown option '--frobnicate'"))
  }

  @Test("-i with a pipe reads the pipe after the scripts")
  func interactiveFlagWithPipe() throws {
    let result = try DSHProcess.run(["-i", "-c", "let a = 5"], input: "a\n")
    #expect(result.output == "a: 5\n")
  }

  @Test(
    "batch output is 80 columns wide in a pipe, or COLUMNS when set (as ls and DuckDB), and has no colour")
  func batchIndependentOfTerminal() throws {
    let plain = try DSHProcess.run(["Scripts/data/menu.dsh"])
    #expect(plain.output.split(separator: "\n").first?.count == 80)
    let narrow = try DSHProcess.run(["Scripts/data/menu.dsh"], environment: ["COLUMNS": "40"])
    #expect(narrow.output.split(separator: "\n").first?.count == 40, "\(narrow.output)")
    #expect(!narrow.output.contains("\u{1B}"))
  }

  @Test("--safe refuses writing, the network, sourcing, and reading outside what was allowed")
  func safeMode() throws {
    let outside = NSTemporaryDirectory() + "dsh-safe-\(UUID().uuidString).csv"
    try "a\n1\n".write(toFile: outside, atomically: true, encoding: .utf8)
    let result = try DSHProcess.run([
      "--safe", "-c", "let p = csv \"Scripts/data/people.csv\"", "-c", "p",
      "-c", "save \"/tmp/dsh-safe-save.dsh\"", "-c", "export p to \"/tmp/dsh-safe-export.csv\"",
      "-c", "let w = http \"http://127.0.0.1:9/x\"",
      "-c", "let g = postgres \"postgresql://reader:s3cret@127.0.0.1:9/x\" table t",
      "-c", "source \"Scripts/data/menu.dsh\"", "-c", "let o = csv \"\(outside)\"",
      "-c", "let q = parquet \"/tmp/dsh-safe-outside.parquet\"", "-c",
      "let up = csv \"../x.csv\"",
      "-c", "set safe off",
    ])
    #expect(result.status == 1)
    #expect(result.output.contains("p: csv provider · 10 items"))
    #expect(result.output.contains("error: --safe refuses writing files (save \"/tmp/dsh-safe-save.dsh\")"))
    #expect(!FileManager.default.fileExists(atPath: "/tmp/dsh-safe-save.dsh"))
    #expect(
      result.output.contains("error: --safe refuses writing files (export … to \"/tmp/dsh-safe-export.csv\")")
    )
    #expect(!FileManager.default.fileExists(atPath: "/tmp/dsh-safe-export.csv"))
    #expect(result.output.contains("error: --safe refuses the network (http \"http://127.0.0.1:9/x\")"))
    #expect(
      result.output.contains(
        "error: --safe refuses the network (postgres \"postgresql://reader@127.0.0.1:9/x\")"))
    #expect(!result.output.contains("s3cret"))
    #expect(
      result.output.contains(
        "error: --safe refuses sourcing other scripts (source \"Scripts/data/menu.dsh\")"))
    #expect(
      result.output.contains(
        "error: --safe refuses reading '\(outside)': only files named on the command line or below the working directory"
      ))
    #expect(result.output.contains("error: --safe refuses reading '../x.csv'"))
    #expect(
      result.output.contains("error: --safe refuses reading '/tmp/dsh-safe-outside.parquet'"),
      "\(result.output)")
    #expect(result.output.contains("error: unknown setting 'safe'"))
    // A script named on the command line may be read, and may read what it is allowed to.
    let named = try DSHProcess.run(["--safe", "Scripts/data/menu.dsh"])
    #expect(named.status == 0)
  }

  @Test("a reader that goes away (dsh … | head -1) ends dsh quietly with status 0")
  func brokenPipe() throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = [
      "-c",
      "'\(DSHProcess.binary)' -c 'show range 0..2000000 as csv' | head -1; echo \"status ${PIPESTATUS:-$?}\"",
    ]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    process.currentDirectoryURL = URL(fileURLWithPath: DSHProcess.packageRoot)
    try process.run()
    let output = String(decoding: readAll(pipe.fileHandleForReading), as: UTF8.self)
    process.waitUntilExit()
    #expect(output.hasPrefix("value\n"))
    #expect(!output.contains("error"))
    #expect(!output.contains("Broken pipe"))
  }

  @Test("a 10 MB line in a CSV loads; a CSV with one long quoted field keeps it whole")
  func longLine() throws {
    let path = NSTemporaryDirectory() + "dsh-long-\(UUID().uuidString).csv"
    let long = String(repeating: "x", count: 10_000_000)
    try "a,b\n1,\"\(long)\"\n2,short\n".write(toFile: path, atomically: true, encoding: .utf8)
    let result = try DSHProcess.run([
      "-c", "let t = csv \"\(path)\"", "-c", "t", "-c", "show t rows 1.. as csv",
    ])
    #expect(result.status == 0)
    #expect(
      result.output
        == "t: csv provider · 2 items in 1 section · fields a int, b text · loaded\na,b\n2,short\n")
  }

  @Test("the tour runs without an error")
  func tour() throws {
    let result = try DSHProcess.run(["Scripts/tour.dsh"])
    #expect(result.status == 0, "\(result.output)")
  }

  @Test("the start script binds the sample data")
  func start() throws {
    let result = try DSHProcess.run(["Scripts/start.dsh"])
    #expect(result.status == 0)
    #expect(result.output.contains("people: csv provider"))
    #expect(result.output.contains("teams: json provider"))
  }

  @Test("--echo prints comments and each statement after the prompt, before its output")
  func echo() throws {
    let script = "# two lists\nshow [1,\n  2] as plain\n\nshow nope\nlet a = 1; show a\n"
    let result = try DSHProcess.run(["--echo"], input: script)
    #expect(
      result.output == """
        # two lists
        dsh> show [1,
        ...>   2] as plain
        value
            1
            2

        dsh> show nope
        <stdin>:5:6: error: no binding named 'nope'
        show nope
             ^~~~
        dsh> let a = 1; show a
        1

        """)
    #expect(result.status == 1)
  }

  @Test("completion scripts for bash, zsh and fish come from the argument parser")
  func completionScripts() throws {
    for (shell, marker) in [("bash", "__dsh"), ("zsh", "#compdef dsh"), ("fish", "complete -c 'dsh'")] {
      let result = try DSHProcess.run(["--generate-completion-script", shell])
      #expect(result.status == 0)
      #expect(result.output.contains(marker), "\(shell)")
    }
  }

  @Test("'-' among the scripts reads one from standard input, in its place")
  func dashReadsStandardInput() throws {
    let result = try DSHProcess.run(
      ["-c", "show 1", "-", "-c", "show x as csv"], input: "let x = [2, 3]\nshow 4\n")
    // Scripts (the '-' among them) run first, then each -c in order.
    #expect(result.output == "4\n1\nvalue\n2\n3\n")
    #expect(result.status == 0)
  }

  @Test("50,000 nested nots are refused with a place; 100,000 and/or terms parse and run")
  func deepPredicates() throws {
    let nots = "let w = [1] | where " + String(repeating: "not ", count: 50_000) + ". == 1\n"
    let refused = try DSHProcess.run([], input: nots)
    #expect(refused.status == 1)
    #expect(refused.output.hasPrefix("<stdin>:1:21: error: expression nested deeper than 1000 levels"))
    let terms = Array(repeating: ". > 0", count: 100_000)
    let long =
      "show [1, 2, 3] | where " + terms.joined(separator: " and ") + " as csv\n"
      + "show [1, 2, 3] | where " + Array(repeating: ". == 2", count: 100_000).joined(separator: " or ")
      + " as csv\n"
    let result = try DSHProcess.run([], input: long)
    #expect(result.output == "value\n1\n2\n3\nvalue\n2\n", "\(result.output.prefix(300))")
    #expect(result.status == 0)
  }

  @Test("a FIFO is refused at once by csv, json, sqlite and source, instead of blocking")
  func fifoRefused() throws {
    let fifo = NSTemporaryDirectory() + "dsh-fifo-\(UUID().uuidString)"
    #expect(mkfifo(fifo, 0o600) == 0)
    defer { unlink(fifo) }
    // Refused, not blocked: a dsh that blocked on the FIFO would never end (the hang ceiling).
    let result = try DSHProcess.run([
      "-c", "show csv \"\(fifo)\"", "-c", "show json \"\(fifo)\"", "-c", "show sqlite \"\(fifo)\" table t",
      "-c", "source \"\(fifo)\"",
    ])
    #expect(result.output.components(separatedBy: "is not a regular file").count == 5, "\(result.output)")
    #expect(result.status == 1)
  }

  @Test("a failed write to standard output (a full disk) says 'write error' and exits 1")
  func writeErrorExits() throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: DSHProcess.binary)
    process.arguments = ["-c", "show range 0..100000 as csv"]
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    let message = String(decoding: readAll(errors.fileHandleForReading), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 1)
    #expect(message == "dsh: write error: No space left on device\n")
  }

  @Test(
    "--safe checks the file check opens on its descriptor: a link swapped in after the path's check leads nowhere"
  )
  func safeCheckRace() throws {
    let folder = NSTemporaryDirectory() + "dsh-race-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder + "/work", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // Inside: a batch UIKit refuses for these counts. Outside: one it accepts, so reading it shows.
    try "no changes\n".write(toFile: folder + "/work/batch.txt", atomically: false, encoding: .utf8)
    try "t: insert rows [0, 3]\n".write(toFile: folder + "/secret.txt", atomically: false, encoding: .utf8)
    symlink(folder + "/secret.txt", folder + "/work/swap")
    // The attack: the file and the link swap places (renameat2 RENAME_EXCHANGE) as fast as they can.
    let swapper = Process()
    swapper.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    swapper.arguments = [
      "python3", "-c",
      // It stops by itself when the test goes (its parent changes) or after the hang ceiling.
      "import ctypes, os, time\nlibc = ctypes.CDLL(None, use_errno=True)\nparent = os.getppid()\n"
        + "end = time.time() + \(Int(Hang.ceiling))\n"
        + "while time.time() < end and os.getppid() == parent: libc.renameat2(-100, b'batch.txt', -100, b'swap', 2)",
    ]
    swapper.currentDirectoryURL = URL(fileURLWithPath: folder + "/work")
    swapper.standardOutput = FileHandle.nullDevice
    swapper.standardError = FileHandle.nullDevice
    try swapper.run()
    defer {
      // SIGKILL: a signal mask inherited from the test runner may block SIGTERM.
      kill(swapper.processIdentifier, SIGKILL)
      swapper.waitUntilExit()
    }
    var escaped = 0
    var refused = 0
    for _ in 0..<200 {
      let result = try DSHProcess.run(
        ["--safe", "-c", "check \"batch.txt\" before [3] after [4]"], directory: folder + "/work")
      if result.output.contains("UIKit accepts this batch") { escaped += 1 }
      if result.output.contains("refuses") || result.output.contains("outside") { refused += 1 }
    }
    #expect(escaped == 0, "the file outside was read \(escaped) times in 200")
    // The swap did happen under dsh: some runs were refused (by the path, or the descriptor).
    #expect(refused > 0)
  }

  @Test("a dsh run by name from PATH finds its samples from the executable, not from argv[0]")
  func samplesFromPath() throws {
    let folder = NSTemporaryDirectory() + "dsh-path-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try FileManager.default.createSymbolicLink(
      atPath: folder + "/dsh", withDestinationPath: DSHProcess.binary)
    var environment = ProcessInfo.processInfo.environment
    environment["PATH"] = folder
    environment["DSH_SAMPLES"] = nil
    // argv[0] is then "dsh", with no folder in it; the working directory is elsewhere.
    let (text, status) = try DSHProcess.runCommand(
      ["/usr/bin/env", "dsh", "-c", "show csv \"samples:people.csv\" | limit 1 as csv"], directory: "/",
      environment: environment)
    #expect(status == 0, "\(text)")
    #expect(text.contains("Ada Lovelace"), "\(text)")

    // The binary alone in a folder of its own: the error says where the samples were looked for.
    try FileManager.default.createDirectory(atPath: folder + "/lone/bin", withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: DSHProcess.binary, toPath: folder + "/lone/bin/dsh")
    let lone = try DSHProcess.run(
      ["-c", "show csv \"samples:people.csv\""], environment: ["DSH_SAMPLES": ""], directory: "/",
      binary: folder + "/lone/bin/dsh")
    #expect(
      lone.output.contains(
        "no such file 'samples:people.csv': the sample data was not found: DSH_SAMPLES is not set, and neither \(folder)/lone/share/dsh/samples nor Scripts/data in a folder above \(folder)/lone/bin holds it; set DSH_SAMPLES to the folder that does"
      ), "\(lone.output)")
  }

  @Test(
    "export and save refuse a read-only file, a database a binding reads, the running script; a dead writer's temporary file goes"
  )
  func writesRespectWhatIsRead() throws {
    let folder = NSTemporaryDirectory() + "dsh-writes-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // A folder anybody may write: only the file's own mode stands between dsh and the file.
    chmod(folder, 0o777)
    try "kept\n".write(toFile: folder + "/keep.csv", atomically: false, encoding: .utf8)
    chmod(folder + "/keep.csv", 0o444)
    try FileManager.default.copyItem(
      atPath: DSHProcess.packageRoot + "/Scripts/data/people.db", toPath: folder + "/people.db")
    chmod(folder + "/people.db", 0o666)
    try "export [1] to \"run.dsh\" as csv\n".write(
      toFile: folder + "/run.dsh", atomically: false, encoding: .utf8)
    chmod(folder + "/run.dsh", 0o666)
    // A temporary file of a dsh killed while it wrote (no process has that number), and one of
    // a process that runs (init's).
    _ = FileManager.default.createFile(atPath: folder + "/out.csv.tmp-2147483000", contents: Data())
    _ = FileManager.default.createFile(atPath: folder + "/out.csv.tmp-2147483001-5eed", contents: Data())
    _ = FileManager.default.createFile(atPath: folder + "/out.csv.tmp-1", contents: Data())
    // Left by a dsh of the user that runs it (nobody, when the tests run as root); one of another
    // user's (the test's own, as root) stays whoever's process it names.
    _ = FileManager.default.createFile(atPath: folder + "/out.csv.tmp-2147483002-0ther", contents: Data())
    if getuid() == 0 {
      for name in ["out.csv.tmp-2147483000", "out.csv.tmp-2147483001-5eed", "out.csv.tmp-1"] {
        chown(folder + "/" + name, 65534, 65534)
      }
    }
    // As root (as CI is) every file is writable: run as nobody, as a user would be.
    let text = try DSHProcess.runUnprivileged(
      [
        "-c", "export [1] to \"keep.csv\"", "-c", "save \"keep.csv\"",
        "-c", "let c = sqlite \"people.db\" table people", "-c", "export [1] to \"people.db\" as csv",
        "-c", "c | where id < 3", "-c", "export [1] to \"out.csv\"", "run.dsh",
      ], directory: folder)
    #expect(
      text.contains(
        "cannot write 'keep.csv': it is read-only (mode 444); make it writable first (chmod u+w) or write another file"
      ), "\(text)")
    #expect(try String(contentsOfFile: folder + "/keep.csv", encoding: .utf8) == "kept\n")
    #expect(text.contains("cannot write 'people.db': the session reads it ('c'); export to another file"))
    #expect(text.contains("2 items"), "\(text)")
    #expect(text.contains("cannot write 'run.dsh': it is a script running now; export to another file"))
    #expect(try String(contentsOfFile: folder + "/run.dsh", encoding: .utf8).hasPrefix("export [1]"))
    #expect(text.contains("exported 1 row to out.csv"))
    #expect(!FileManager.default.fileExists(atPath: folder + "/out.csv.tmp-2147483000"))
    #expect(!FileManager.default.fileExists(atPath: folder + "/out.csv.tmp-2147483001-5eed"))
    #expect(FileManager.default.fileExists(atPath: folder + "/out.csv.tmp-1"))
    if getuid() == 0 {
      #expect(FileManager.default.fileExists(atPath: folder + "/out.csv.tmp-2147483002-0ther"))
    }
  }

  @Test(
    "export and save do not write through another user's link in a shared sticky folder",
    .enabled(if: getuid() == 0, "needs root, as CI runs, to plant another user's link"))
  func noWriteThroughAnotherUsersLink() throws {
    // A folder like /tmp: root's, sticky, anybody may write.
    let folder = NSTemporaryDirectory() + "dsh-sticky-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    chmod(folder, 0o1777)
    try "secret\n".write(toFile: folder + "/victim", atomically: false, encoding: .utf8)
    chmod(folder + "/victim", 0o600)
    // nobody plants a link to root's file, and one to a file not there yet.
    for (target, link) in [("victim", "report.csv"), (folder + "/created.csv", "dangling.csv")] {
      let planted = try DSHProcess.runCommand(
        [
          "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/ln", "-s", target,
          link,
        ],
        directory: folder)
      try #require(planted.status == 0, "\(planted.output)")
    }
    // A folder on the way that is nobody's link to root's own folder, and a file nobody made
    // there for root to write over (it would stay theirs, mode 666).
    let rootOnly = folder + "-rootonly"
    try FileManager.default.createDirectory(atPath: rootOnly, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: rootOnly) }
    chmod(rootOnly, 0o700)
    for command in [["/bin/ln", "-s", rootOnly, "dir"], ["/bin/sh", "-c", "umask 0; echo x > planted.csv"]] {
      let planted = try DSHProcess.runCommand(
        ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command, directory: folder)
      try #require(planted.status == 0, "\(planted.output)")
    }
    // root's own link there is still followed.
    symlink("mine.csv", folder + "/own.csv")
    let result = try DSHProcess.run(
      [
        "-c", "export [1] to \"report.csv\" as csv", "-c", "save \"report.csv\"", "-c",
        "export [1] to \"dangling.csv\" as csv", "-c", "export [1] to \"own.csv\" as csv",
        "-c", "export [1] to \"dir/keep.csv\" as csv", "-c", "save \"dir/saved.dsh\"",
        "-c", "export [1] to \"planted.csv\" as csv",
      ], directory: folder)
    #expect(
      result.output.contains(
        "cannot write 'report.csv': it is a symbolic link that another user (nobody) made in a shared folder"
      ), "\(result.output)")
    #expect(result.output.contains("cannot write 'dangling.csv': it is a symbolic link"))
    #expect(try String(contentsOfFile: folder + "/victim", encoding: .utf8) == "secret\n")
    #expect(!FileManager.default.fileExists(atPath: folder + "/created.csv"))
    #expect(try String(contentsOfFile: folder + "/mine.csv", encoding: .utf8) == "value\n1\n")
    #expect(result.output.contains("cannot write 'dir/keep.csv': it leads to '"), "\(result.output)")
    #expect(result.output.contains("cannot write 'dir/saved.dsh': it leads to '"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: rootOnly).isEmpty)
    #expect(
      result.output.contains(
        "cannot write 'planted.csv': it is a file that another user (nobody) made in a shared folder"))
    #expect(try String(contentsOfFile: folder + "/planted.csv", encoding: .utf8) == "x\n")
  }

  @Test("save follows a link, keeps the file's mode and owner, and refuses a FIFO or a folder")
  func saveRespectsWhatIsThere() throws {
    let folder = NSTemporaryDirectory() + "dsh-save-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try "old\n".write(toFile: folder + "/real.dsh", atomically: false, encoding: .utf8)
    chmod(folder + "/real.dsh", 0o600)
    // Run as root (as CI is), the file belongs to someone else, whose ownership must stay.
    let owner: uid_t = getuid() == 0 ? 65534 : getuid()
    chown(folder + "/real.dsh", owner, getgid())
    symlink("real.dsh", folder + "/link.dsh")
    #expect(mkfifo(folder + "/pipe", 0o600) == 0)
    try "id\n1\n".write(toFile: folder + "/data.csv", atomically: false, encoding: .utf8)
    let result = try DSHProcess.run(
      [
        "-c", "let a = [1]", "-c", "save \"link.dsh\"", "-c", "save \"pipe\"", "-c", "save \".\"", "-c",
        "save \"sub/\"", "-c", "let d = csv \"data.csv\"", "-c", "save \"data.csv\"",
      ],
      directory: folder)
    #expect(result.output.contains("saved 1 binding to link.dsh"))
    #expect(result.output.contains("cannot write 'pipe': it is not a regular file"))
    #expect(result.output.contains("cannot write '.': it is a folder"))
    #expect(result.output.contains("cannot write 'sub/': a path ending in '/' is a folder"))
    #expect(
      result.output.contains("cannot write 'data.csv': the session reads it ('d'); save to another file"))
    #expect(try String(contentsOfFile: folder + "/data.csv", encoding: .utf8) == "id\n1\n")
    let link = try FileManager.default.attributesOfItem(atPath: folder + "/link.dsh")
    #expect(link[.type] as? FileAttributeType == .typeSymbolicLink)
    let real = try FileManager.default.attributesOfItem(atPath: folder + "/real.dsh")
    #expect((real[.posixPermissions] as? Int) == 0o600)
    #expect((real[.ownerAccountID] as? NSNumber)?.uint32Value == owner)
    #expect(try String(contentsOfFile: folder + "/real.dsh", encoding: .utf8).contains("let a = [1]"))
    var status = stat()
    #expect(lstat(folder + "/pipe", &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
  }

  @Test(
    "--safe checks the file actually opened: a link then '..', a file swapped for a link before reload, SQLite too"
  )
  func safeModeChecksTheOpenedFile() throws {
    let folder = NSTemporaryDirectory() + "dsh-safe-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // sub/etc is a link to /etc/ssl: sub/etc/../passwd is /etc/passwd, not sub/passwd.
    symlink("/etc/ssl", folder + "/sub/etc")
    try "a\n1\n".write(toFile: folder + "/swap.csv", atomically: false, encoding: .utf8)
    let database = folder + "/swap.db"
    try DSHProcess.python(
      "import sqlite3; c = sqlite3.connect('\(database)'); c.execute('create table t (a)'); c.commit()")

    let dsh = try DSHStream(["--safe", "-"], directory: folder)
    dsh.send("show csv \"sub/etc/../passwd\"")
    #expect(dsh.waitFor("error: --safe refuses reading 'sub/etc/../passwd'") != nil)
    dsh.send("let t = csv \"swap.csv\"")
    dsh.send("let d = sqlite \"swap.db\" table t")
    dsh.send("show t")
    #expect(dsh.waitFor("│ 1 │") != nil)
    // Between the check of the path and the open, or before a reload: the file becomes a link.
    try FileManager.default.removeItem(atPath: folder + "/swap.csv")
    symlink("/etc/passwd", folder + "/swap.csv")
    try FileManager.default.removeItem(atPath: database)
    symlink("/etc/passwd", database)
    dsh.send("reload t")
    #expect(
      dsh.waitFor("error: 'swap.csv' opens '/etc/passwd', outside the files this session may read") != nil)
    dsh.send("reload d")
    #expect(
      dsh.waitFor("error: 'swap.db' opens '/etc/passwd', outside the files this session may read") != nil)
    #expect(dsh.finish() == 1)
  }

  @Test("a WAL database is read without making -wal or -shm files, also from a read-only folder")
  func walDatabaseLeavesNothing() throws {
    let folder = NSTemporaryDirectory() + "dsh-wal-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer {
      chmod(folder, 0o755)
      try? FileManager.default.removeItem(atPath: folder)
    }
    try DSHProcess.python(
      "import sqlite3; c = sqlite3.connect('\(folder)/w.db'); c.execute('pragma journal_mode=wal');"
        + " c.execute('create table t (a)'); c.execute('insert into t values (7)'); c.commit(); c.close()")
    chmod(folder, 0o555)
    let result = try DSHProcess.run(
      ["--safe", "-c", "show sqlite \"w.db\" table t as csv"], directory: folder)
    #expect(result.output == "a\n7\n")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["w.db"])
  }

  @Test(
    "--safe: a file flipped between a regular file and a link to /etc/passwd while dsh reloads it is never read through the link"
  )
  func safeModeRace() throws {
    let folder = NSTemporaryDirectory() + "dsh-race-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let file = folder + "/flip.csv"
    try "a\n1\n".write(toFile: folder + "/plain.csv", atomically: false, encoding: .utf8)
    symlink("/etc/passwd", folder + "/link.csv")
    link(folder + "/plain.csv", file)
    let stop = Mutex(false)
    let flips = Mutex(0)
    let flipper = Thread {
      var useLink = true
      while !stop.withLock({ $0 }) {
        flips.withLock { $0 += 1 }
        // rename is atomic: the path is always one or the other.
        let staged = folder + "/staged"
        if useLink { symlink("/etc/passwd", staged) } else { link(folder + "/plain.csv", staged) }
        rename(staged, file)
        useLink.toggle()
      }
    }
    flipper.start()
    // Under load the thread may start late: the race is only run once it is flipping.
    while flips.withLock({ $0 }) < 100 { Thread.sleep(forTimeInterval: 0.001) }
    var script = "let t = csv \"plain.csv\"\n"
    for _ in 0..<1_000 { script += "show csv \"flip.csv\" as csv\n" }
    let result = try DSHProcess.run(["--safe", "-"], input: script, directory: folder)
    stop.withLock { $0 = true }
    #expect(!result.output.contains("root:"), "read /etc/passwd through the link")
    #expect(
      result.output.contains("outside the files this session may read")
        || result.output.contains("--safe refuses"))
  }

  @Test("two scripts that source each other: the first runs once, and the error names the whole cycle")
  func sourceCycleFromTheTop() throws {
    let result = try DSHProcess.run(["Tests/dshTests/Fixtures/cycle_a.dsh"])
    #expect(result.output.components(separatedBy: "\"in cycle_a\"").count == 2, "\(result.output)")
    #expect(
      result.output.contains(
        "'cycle_a.dsh' is already running (Tests/dshTests/Fixtures/cycle_a.dsh → cycle_b.dsh → cycle_a.dsh)"))
    #expect(result.status == 1)
  }

  @Test("60,000 stacked headers end in a placed error, not a stack overflow; 2,000 still show")
  func deepDecorations() throws {
    let folder = NSTemporaryDirectory() + "dsh-deep-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let base = "let t = table [1] with cell basic \"{.}\""
    try (base + String(repeating: " | header \"h\"", count: 60_000) + "\nshow t rows 0..1\n").write(
      toFile: folder + "/deep.dsh", atomically: false, encoding: .utf8)
    try (base + String(repeating: " | header \"h\"", count: 1_999) + "\nshow t rows 0..1 as csv\n").write(
      toFile: folder + "/fine.dsh", atomically: false, encoding: .utf8)
    let deep = try DSHProcess.run([folder + "/deep.dsh"])
    #expect(deep.status == 1, "\(deep.output.suffix(500))")
    #expect(
      deep.output.contains("deep.dsh:1:26043: error: more than 2000 decorations stacked on one table"))
    let fine = try DSHProcess.run([folder + "/fine.dsh"])
    #expect(fine.status == 0, "\(fine.output.suffix(500))")
    #expect(fine.output.contains("1"))
  }

  @Test(
    "blow-ups stay linear: 4,096 composed tables, 20,000 chained wheres, 4,000 mixed stages, a 100,000-column CSV",
    arguments: ["compose", "chain", "mixed", "wide"])
  func linearAtScale(_ shape: String) throws {
    let folder = NSTemporaryDirectory() + "dsh-scale-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    var script: String
    let expected: String
    switch shape {
    case "compose":
      // Each row looked its table up by walking every table before it: 2,048 took 4.9 s.
      let tables = (0..<4_096).map { "(table [\($0)] with cell basic \"{.}\")" }.joined(separator: ", ")
      script = "let c = compose \(tables)\nshow c rows 4093..4096\n"
      expected = "4096 rows (3 shown)"
    case "chain":
      // Each item passed through every level: 20,000 levels took 610 s.
      script = "let v = range 0..100\n" + String(repeating: "let v = v | where . > 0\n", count: 20_000)
      script += "show v rows 0..2\n"
      expected = "99 rows (2 shown)"
    case "mixed":
      // Fields computed over a stage asked the chain below twice for its table at every level:
      // 40 stages took 7 s and each two more doubled it. 4,000 `extend`s alone took 37 s, each
      // statement working out the profiles of every stage below again.
      let stages = ["extend x = a + 1", "where x > 1", "select a, x", "sort by a desc"]
      script = "let v = [{a: 1}, {a: 2}, {a: 3}]\n"
      script += (0..<4_000).map { "let v = v | \(stages[$0 % stages.count])\n" }.joined()
      // Then up to the limit of 5,000 stages an item is read through.
      script += String(repeating: "let v = v | extend x = x + 1\n", count: 900)
      script += "show v as csv\n"
      expected = "a,x\n3,904\n2,903\n"
    default:
      // Duplicate names were found by a linear search, and widths narrowed one column a step.
      let width = 100_000
      let header = (0..<width).map { "c\($0)" }.joined(separator: ",")
      try (header + "\n" + Array(repeating: "1", count: width).joined(separator: ",") + "\n")
        .write(toFile: folder + "/wide.csv", atomically: false, encoding: .utf8)
      script = "describe csv \"wide.csv\"\nshow csv \"wide.csv\" | limit 1 as csv\n"
      expected = "csv \"wide.csv\"  (1 section, 1 item, loaded)"
    }
    try script.write(toFile: folder + "/scale.dsh", atomically: false, encoding: .utf8)
    // The answer only: how long it takes is measured by `Scripts/bench.sh scale`, and a
    // quadratic run of this size ends at the hang ceiling.
    let result = try DSHProcess.run(["scale.dsh"], directory: folder)
    #expect(result.status == 0, "\(result.output.prefix(500))")
    #expect(result.output.contains(expected))
  }

  @Test(
    "limits that keep a statement from overrunning the stack or the memory end it with a placed error or a note"
  )
  func expansionLimits() throws {
    let folder = NSTemporaryDirectory() + "dsh-limits-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // 20,000 terms crashed dsh (SIGSEGV) in extend, where and templates alike; 1,000 is the
    // limit, as SQLite's and DuckDB's, and a chain of `or` costs only its log.
    let sum = Array(repeating: "a", count: 20_000).joined(separator: " + ")
    let fits = Array(repeating: "a", count: 1_000).joined(separator: " + ")
    let wide = Array(repeating: "a > 0", count: 100_000).joined(separator: " or ")
    let script = """
      let v = [{a: 1}]
      show v | extend y = \(sum)
      show v | where \(sum) > 0
      show table v with cell basic "{\(sum)}"
      show v | extend y = \(fits) as csv
      show v | where \(wide) | extend z = 7 as csv
      let c = table [1, 2] with cell basic "{.}"

      """
      // Each line doubles the tables: 2^20 took minutes and ^C could not stop it.
      + String(repeating: "let c = compose c, c\n", count: 20)
      // Each line nests one level deeper (100,000 hung); in one statement 100,000 overran the
      // parser's stack.
      + "let e = table [1] with cell basic \"{.}\"\n" + String(repeating: "let e = compose e\n", count: 2_010)
      + "show " + String(repeating: "compose ", count: 1_000) + "e\n"
        + """
        show [{x: "ab"}] | extend x = x + x | extend x = x + x | extend n = len(x) | select n as csv
        let d = [{x: "0123456789"}]

        """
      // Doubling a text 34 times asked for more memory than the machine had.
      + String(repeating: "let d = d | extend x = x + x\n", count: 34) + "show d | select x as csv\n"
      // Each item is read through every stage: 8,000 crashed a debug build.
      + "let s = [{a: 1}]\n" + String(repeating: "let s = s | extend a = a + 1\n", count: 5_001)
      + "show s as csv\n"
    try script.write(toFile: folder + "/limits.dsh", atomically: false, encoding: .utf8)
    let result = try DSHProcess.run(["limits.dsh"], directory: folder)
    #expect(result.status == 1)
    let tooDeep = "error: expression nested deeper than 1000 levels; split it into steps"
    #expect(result.output.contains("limits.dsh:2:21: \(tooDeep)"), "\(result.output.prefix(2_000))")
    #expect(result.output.contains("limits.dsh:3:16: \(tooDeep)"))
    #expect(result.output.contains("limits.dsh:4:32: \(tooDeep)"))
    #expect(result.output.contains("a,y\n1,1000\n"))
    #expect(result.output.contains("a,z\n1,7\n"))
    #expect(
      result.output.contains(
        "limits.dsh:21:9: error: this composition stands for 16384 tables once the compositions inside it are expanded, more than 10000"
      ))
    #expect(
      result.output.contains(
        "limits.dsh:2028:9: error: compositions and decorations nested more than 2000 deep"))
    #expect(result.output.components(separatedBy: "nested more than 2000 deep").count == 12)
    #expect(
      result.output.contains(
        "limits.dsh:2039:2054: error: sources nested more than 256 deep in one statement (compose inside compose …); bind the inner ones with let"
      ))
    #expect(result.output.contains("n\n8\n"))
    #expect(
      result.output.contains(
        "error: more than 5000 stages over one source; each item read passes through every one"))
    #expect(result.output.components(separatedBy: "more than 5000 stages").count == 3)
    #expect(result.output.hasSuffix("a\n5000\n"), "\(result.output.suffix(300))")
    // 10 × 2^23 bytes fit; the next doubling gives null and says why.
    #expect(result.output.contains("x\n\nnote: a text longer than 100000000 bytes gave null"))
  }

  @Test("a script rebinding one name 100,000 times runs in bounded memory (it kept 250 MB at 100,000)")
  func rebindingMemory() throws {
    let folder = NSTemporaryDirectory() + "dsh-rebind-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try String(repeating: "let x = [1, 2, 3]\n", count: 100_000)
      .write(toFile: folder + "/rebind.dsh", atomically: false, encoding: .utf8)
    // The peak resident size of dsh, as the kernel counted it (Python's resource module reads it).
    let measure = """
      import resource, subprocess, sys
      subprocess.run([sys.argv[1], sys.argv[2]], stdout=subprocess.DEVNULL, check=True)
      print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
      """
    let result = try DSHProcess.runTool(
      "/usr/bin/env", ["python3", "-c", measure, DSHProcess.binary, folder + "/rebind.dsh"])
    let kilobytes = Int(result.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .max
    #expect(kilobytes < 120_000, "peak \(kilobytes) KB")
  }

  @Test("a file without read permission: csv and sqlite both say 'Permission denied'")
  func permissionDenied() throws {
    // As root (CI) every file is readable: run dsh as nobody, as a user would be.
    let folder = NSTemporaryDirectory() + "dsh-perm-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    chmod(folder, 0o755)
    try "a\n1\n".write(toFile: folder + "/secret.csv", atomically: false, encoding: .utf8)
    try Data("SQLite format 3\0".utf8).write(to: URL(fileURLWithPath: folder + "/secret.db"))
    for name in ["secret.csv", "secret.db"] { chmod(folder + "/" + name, 0o000) }
    let text = try DSHProcess.runUnprivileged(
      ["-c", "show csv \"secret.csv\"", "-c", "show sqlite \"secret.db\" table t"], directory: folder)
    #expect(text.contains("error: cannot read 'secret.csv': Permission denied"), "\(text)")
    #expect(text.contains("error: cannot read 'secret.db': Permission denied"), "\(text)")
  }

  @Test("a script named on the command line that cannot be read says why, in the data sources' words")
  func unreadableScripts() throws {
    let folder = NSTemporaryDirectory() + "dsh-scripts-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try "show 1\n".data(using: .utf16)?.write(to: URL(fileURLWithPath: folder + "/wide.dsh"))
    let result = try DSHProcess.run([folder + "/wide.dsh", folder, "/dev/null", folder + "/none.dsh"])
    #expect(
      result.output.contains("'\(folder)/wide.dsh' is UTF-16, not UTF-8; convert it with: iconv -f UTF-16"))
    #expect(result.output.contains("'\(folder)' is a directory, not a file"))
    #expect(result.output.contains("'/dev/null' is not a regular file"))
    #expect(result.output.contains("no such file '\(folder)/none.dsh'"))
    #expect(result.status == 1)
  }

  @Test("dsh-bench: --help names its parts; a dsh path with no binary is an error with the way out")
  func benchArguments() throws {
    let bench = URL(fileURLWithPath: DSHProcess.binary).deletingLastPathComponent().appendingPathComponent(
      "dsh-bench"
    )
    .path
    let help = try DSHProcess.run(["--help"], binary: bench)
    #expect(help.status == 0)
    #expect(help.output.contains("usage: dsh-bench [PATH-TO-DSH] [scale|types|"), "\(help.output)")
    #expect(help.output.contains("|explore|parquet|plans|serve]"), "\(help.output)")
    let missing = try DSHProcess.run(["/nonexistent/dsh", "explore"], binary: bench)
    #expect(missing.status == 2)
    #expect(
      missing.output.contains("dsh-bench: no dsh binary at /nonexistent/dsh; build it first"),
      "\(missing.output)")
  }

  @Test(
    "DSH_THREADS caps the parts a large file is split into: the same rows and the same errors whatever it says"
  )
  func threadsFromTheEnvironment() throws {
    let folder = NSTemporaryDirectory() + "threads-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // 5 MB: quoted fields with line ends, accents, every row; then a byte that is not UTF-8.
    var text = "id,note,city\n"
    for i in 0..<60_000 { text += "\(i),\"line \(i)\nnext, \"\"quoted\"\"\",Zoë \(i % 97)\n" }
    try text.write(toFile: folder + "/good.csv", atomically: true, encoding: .utf8)
    try (Data(text.utf8) + Data([0x31, 0x2C, 0xFF, 0x2C, 0x78, 0x0A])).write(
      to: URL(fileURLWithPath: folder + "/bad.csv"))
    func run(_ file: String, _ threads: String?) throws -> DSHProcess.Result {
      try DSHProcess.run(
        [
          "-c", "show csv \"\(folder)/\(file)\" | sort by id desc | limit 3 as csv", "-c",
          "show csv \"\(folder)/\(file)\" | where city == \"Zoë 5\" | limit 2 as csv",
        ],
        environment: threads.map { ["DSH_THREADS": $0] } ?? [:])
    }
    let good = try run("good.csv", nil)
    let bad = try run("bad.csv", nil)
    #expect(
      good.status == 0 && good.output.contains("59999,\"line 59999\nnext, \"\"quoted\"\"\",Zoë 53"),
      "\(good.output)")
    #expect(bad.status != 0 && bad.output.contains("UTF-8"), "\(bad.output)")
    for threads in ["1", "3", "8", "0", "abc"] {
      #expect(try run("good.csv", threads).output == good.output, "DSH_THREADS=\(threads)")
      #expect(try run("bad.csv", threads).output == bad.output, "DSH_THREADS=\(threads)")
    }
  }

  @Test("dsh starts with no shared Swift runtime, libcurl or libpq: each library is opened when first used")
  func librariesOpenedWhenUsed() throws {
    // glibc's loader names every library it loads, and why, under LD_DEBUG=files.
    func loaded(_ statement: String) throws -> [String] {
      let result = try DSHProcess.run(["-c", statement], environment: ["LD_DEBUG": "files"])
      return result.output.split(separator: "\n").filter { $0.contains("file=") && $0.contains("[0];  ") }
        .map(String.init)
    }
    let plain = try loaded("show [1]")
    #expect(plain.contains { $0.contains("file=libc.so.6") }, "\(plain)")
    for name in ["libswiftCore", "libFoundation", "libcurl", "libpq"] {
      #expect(!plain.contains { $0.contains("file=" + name) }, "\(name) loaded at start: \(plain)")
    }
    // Port 1 refuses at once: libcurl is opened to try, and says so.
    let web = try loaded("show json \"http://127.0.0.1:1/x.json\"")
    #expect(web.contains { $0.contains("file=libcurl") && $0.contains("dynamically loaded") }, "\(web)")
    #expect(!web.contains { $0.contains("file=libpq") }, "\(web)")
    let server = try loaded("let p = postgres \"postgresql://nobody@127.0.0.1:1/none\" table x")
    #expect(
      server.contains { $0.contains("file=libpq.so.5") && $0.contains("dynamically loaded") }, "\(server)")
  }

  // Hiding a library takes a mount namespace, which root may make (CI runs as root).
  @Test(
    "without libcurl or libpq, the statement that needs one names the package to install; others work",
    .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")))
  func librariesMissing() throws {
    let empty = NSTemporaryDirectory() + "dsh-empty-\(UUID().uuidString).so"
    try Data().write(to: URL(fileURLWithPath: empty))
    defer { try? FileManager.default.removeItem(atPath: empty) }
    // Each library's file, wherever this machine keeps it, covered by an empty one.
    let folders = [
      "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib",
    ]
    let hidden = ["libcurl.so.4", "libcurl-gnutls.so.4", "libpq.so.5"].flatMap { name in
      folders.map { "\($0)/\(name)" }.filter { FileManager.default.fileExists(atPath: $0) }
    }
    #expect(hidden.contains { $0.hasSuffix("libpq.so.5") }, "\(hidden)")
    let dsh = DSHProcess.binary
    let script =
      hidden.map { "mount --bind \(empty) \($0) && " }.joined()
        + """
        \(dsh) -c 'show [1] as csv'; \
        \(dsh) -c 'show json "http://127.0.0.1:1/x.json"'; \
        \(dsh) -c 'let p = postgres "postgresql://nobody@127.0.0.1:1/none" table x'
        """
    let result = try DSHProcess.runCommand(
      ["/usr/bin/unshare", "-m", "sh", "-c", script], directory: DSHProcess.packageRoot)
    #expect(result.output.hasPrefix("value\n1\n"), "\(result.output)")
    #expect(
      result.output.contains(
        "reading from the web needs libcurl (Debian's libcurl4), which could not be opened: "),
      "\(result.output)")
    #expect(
      result.output.contains("PostgreSQL needs libpq (Debian's libpq5), which could not be opened: "),
      "\(result.output)")
  }
}
