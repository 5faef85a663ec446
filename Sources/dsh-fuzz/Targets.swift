// The two narrower targets Scripts/fuzz.sh runs beside the script target: the Swift generator
// (`show … as swift`) fed hostile text, and expressions over values at the limits of Int64 and
// Double. DSH_FUZZ_TARGET picks one.
import DataSourceKit
import DataSourceKitValues
import DataSourceScript
import Foundation

/// Output kept as text, to read what a statement printed.
///
/// `@unchecked Sendable`: a fuzz input runs its statements one after another, and the text is
/// read only after the run has returned.
final class CollectedOutput: ScriptOutput, @unchecked Sendable {
  private(set) var text = ""
  private(set) var errors = ""
  func write(_ text: String) { self.text += text }
  func writeError(_ text: String) { errors += text }
}

/// Runs `script` in a session with files and the network off, shows cut at 50 rows and a
/// 5-second deadline that cancels the statement as ^C would; returns what it printed.
func runScript(_ script: String) -> CollectedOutput {
  let output = CollectedOutput()
  let done = DispatchSemaphore(value: 0)
  Task { @MainActor in
    var environment = Environment.batch
    environment.sandbox = Sandbox(allowedFiles: [], allowedFolder: nil)
    let session = Session(environment: environment, output: output)
    session.settings.maxRows = 50
    let run = Task { @MainActor in await session.run(SourceFile(name: "fuzz.dsh", text: script)) }
    let deadline = Task {
      try await Task.sleep(for: .seconds(5))
      run.cancel()
    }
    _ = await run.value
    deadline.cancel()
    done.signal()
  }
  done.wait()
  return output
}

// MARK: The Swift generator

/// The input as text a user typed into a screen (a header, a footer, a cell's words, a field's
/// name, and so the statement echoed in the program's first comment), printed `as swift`.
///
/// The program must parse (`swiftc -frontend -dump-parse`, the compiler's own parser) into the
/// same tree as the program made with plain words in the same places: text that ends a comment
/// or a string and goes on as code (a CR, U+2028, `*/`, `"""`, `\(`) changes the tree. Braces
/// and backquotes, which would make template holes and names, are replaced; a statement dsh
/// refuses is no finding.
func fuzzSwiftGenerator(_ text: String) {
  var words = ""
  for scalar in text.unicodeScalars {
    switch scalar {
    case "\\": words += "\\\\"
    case "\"": words += "\\\""
    case "\n": words += "\\n"
    case "{", "}", "`": words += "("
    default: words.unicodeScalars.append(scalar)
    }
  }
  func screen(_ words: String) -> String {
    // Each piece of text sits between fixed letters, so no part of a Swift string is empty
    // in one program and not in the other.
    let piece = "<[\(words)]>"
    return """
      show table [{"\(piece)": 1}] with cell subtitle "\(piece) {`\(piece)`}" detail "\(piece)" | header "\(piece)" | footer "\(piece)" as swift
      """
  }
  let fuzzed = runScript(screen(words))
  guard fuzzed.errors.isEmpty, !fuzzed.text.isEmpty else { return }
  let plain = runScript(screen("plain words"))
  precondition(plain.errors.isEmpty, "the plain screen failed: \(plain.errors)")
  let fuzzedTree = parseTree(of: fuzzed.text)
  let plainTree = parseTree(of: plain.text)
  if fuzzedTree != plainTree {
    fatalError(
      "the generated program parses into another tree:\n\(fuzzed.text)\n--- its tree ---\n\(fuzzedTree)\n--- expected ---\n\(plainTree)"
    )
  }
}

/// The compiler's parse tree of `program`, without what text may change.
///
/// Quoted values (literals, names), source ranges and addresses are left out; whether the
/// program parsed at all is part of it.
func parseTree(of program: String) -> String {
  let path = NSTemporaryDirectory() + "dsh-fuzz-\(getpid()).swift"
  _ = FileManager.default.createFile(atPath: path, contents: Data(program.utf8))
  defer { unlink(path) }
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  process.arguments = ["swiftc", "-frontend", "-dump-parse", path]
  let pipe = Pipe()
  process.standardOutput = pipe
  process.standardError = FileHandle.nullDevice
  do { try process.run() } catch { fatalError("swiftc could not be started: \(error)") }
  let dump = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  process.waitUntilExit()
  // A program that does not parse exits 1 (its errors go to standard error).
  var tree = "exit \(process.terminationStatus)\n" + dump
  for pattern in [#""(?:[^"\\]|\\.)*""#, #"range=\[[^\]]*\]"#, #"0x[0-9a-f]+"#, #"literal_capacity=[0-9]+"#] {
    tree = tree.replacingOccurrences(of: pattern, with: "…", options: .regularExpression)
  }
  return tree
}

// MARK: Numbers at their limits

/// Expressions over values at the edges of what ints and doubles hold.
///
/// The values are literals and a record's fields; numeric expressions built from the input (with conversions to text and back, and dates made
/// from numbers) are extended, filtered on, sorted by, grouped by and put in templates. Any
/// answer is fine (null with a note included); a crash, a trap or a hang is a finding.
func fuzzNumbers(_ bytes: [UInt8]) {
  let numbers = [
    "9223372036854775807", "(-9223372036854775807 - 1)", "-9223372036854775807", "0", "1", "-1", "2", "3",
    "4611686018427387904", "9007199254740993", "1.7976931348623157e308", "-1.7976931348623157e308", "5e-324",
    "2.2250738585072014e-308", "0.5", "-0.0", "1e300", "400", "-400", "63", "64", "a", "b", "c",
  ]
  var position = 0
  var inTemplate = false
  func next() -> Int {
    defer { position += 1 }
    return position < bytes.count ? Int(bytes[position]) : 0
  }
  func pick(_ choices: [String]) -> String { choices[next() % choices.count] }
  func number(_ depth: Int) -> String {
    let choice = next()
    // Fields most of the time: a literal out of range is refused where it is written.
    if depth >= 5 || choice < 48 { return pick(["a", "b", "c"]) }
    if choice < 80 { return pick(numbers) }
    let n = { number(depth + 1) }
    switch choice % 16 {
    case 0, 1, 2, 3: return "(\(n()) \(pick(["+", "-", "*", "/", "%"])) \(n()))"
    case 4: return "-(\(n()))"
    case 5: return "\(pick(["abs", "floor", "ceil", "round", "int", "double"]))(\(n()))"
    case 6: return "round(\(n()), int(\(n())))"
    case 7: return "len(\(text(depth + 1)))"
    case 8: return "int(\(text(depth + 1)))"
    case 9: return "double(\(text(depth + 1)))"
    case 10: return "coalesce(\(n()), \(n()))"
    case 11: return "if(\(condition(depth + 1)), \(n()), \(n()))"
    case 12: return "days(date(\(text(depth + 1))), date(\(text(depth + 1))))"
    case 13: return "\(pick(["year", "month", "day", "weekday"]))(date(\(text(depth + 1))))"
    case 14: return "hour(timestamp(text(\(n()))))"
    default: return "year(date(text(\(n()))))"
    }
  }
  func text(_ depth: Int) -> String {
    let n = { number(depth + 1) }
    switch next() % 4 {
    case 0: return "text(\(n()))"
    case 1: return "substr(text(\(n())), int(\(n())), int(\(n())))"
    case 2: return "replace(text(\(n())), \"1\", text(\(n())))"
    default:
      // Inside a template's hole a quote would end the template: texts there are made of numbers.
      if inTemplate { return "text(\(n()))" }
      return pick(["\"9223372036854775808\"", "\"-1e999\"", "\"2013-1-5\"", "\"x\"", "\"00012\""])
    }
  }
  func condition(_ depth: Int) -> String {
    "(\(number(depth + 1)) \(pick(["==", "!=", "<", ">="])) \(number(depth + 1)))"
  }
  // A record literal holds literals only: not the sum that writes Int.min, nor fields.
  let field = { pick(numbers.filter { !$0.hasPrefix("(") && !["a", "b", "c"].contains($0) } + ["null"]) }
  let record = { "{a: \(field()), b: \(field()), c: \(field())}" }
  let script = """
    let v = [\(record()), \(record()), {a: null, b: 0, c: -1}]
    let w = v | extend r = a, t = "x"
    let w = v | extend r = \(number(0)), t = \(text(0))
    let w = v | extend r = \(number(0)), t = "x"
    show v | extend t = \(text(0)) as csv
    show w as csv
    show w | where \(condition(0)) and \(condition(0)) | sort by \(number(0)) desc as csv
    show w | group by r with n = count(), s = sum(r), m = max(r), l = avg(r), f = first(t) as csv

    """
    + { () -> String in
      inTemplate = true
      return
        "show table w with cell basic \"{\(number(0))} {\(text(0))}\" | header \"{sum(r)} {min(r)}\" as plain\n"
    }()
  let output = runScript(script)
  // DSH_FUZZ_SHOW=1 prints each script and its errors, to see what the target reaches.
  if ProcessInfo.processInfo.environment["DSH_FUZZ_SHOW"] != nil {
    FileHandle.standardError.write(Data((script + "\n" + output.errors + "\n").utf8))
  }
}
