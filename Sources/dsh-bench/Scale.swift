import Foundation

// Issue 11: inputs shaped to blow dsh up — thousands of composed tables, a chain of wheres, a
// header of a million columns, a name rebound 400,000 times, JSON records, a server that never
// stops. Each is measured as a whole process and set beside the same work at a tenth of the
// size (linear means about 10×) or beside the file's size.

/// Writes `text` to a file under the bench folder; its path.
func benchFile(_ name: String, _ text: String) -> String {
  let path = dataFolder + "/" + name
  _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
  return path
}

/// A row comparing a measure at full size with the same at a tenth: linear is about 10×.
func linearRow(_ what: String, small: Measurement, large: Measurement) -> Row {
  let ratio = large.seconds / max(small.seconds, 0.001)
  return Row(
    what: what, dsh: seconds(large.seconds) + (large.status == 0 ? "" : " (FAILED)"),
    other: "a tenth of it: " + seconds(small.seconds),
    figure: String(format: "%.1f× for 10× the input", ratio),
    target: "≤ 20× (linear, with start-up)", met: large.status == 0 && ratio <= 20)
}

@MainActor
func measureScale() {
  // Composed tables: a view of n one-row tables.
  func compose(_ n: Int) -> String {
    let tables = (0..<n).map { "(table [\($0)] with cell basic \"{.}\")" }.joined(separator: ", ")
    return benchFile("compose-\(n).dsh", "let c = compose \(tables)\nshow c\n")
  }
  let composeSmall = median { measure([dsh, compose(820)]) }
  let composeLarge = median { measure([dsh, compose(8_192)]) }
  rows.append(linearRow("show a compose of 8,192 tables", small: composeSmall, large: composeLarge))

  // A chain of wheres, each over the one before.
  func chain(_ n: Int) -> String {
    benchFile(
      "chain-\(n).dsh",
      "let v = range 0..100\n" + String(repeating: "let v = v | where . > 0\n", count: n) + "show v\n")
  }
  let chainSmall = median { measure([dsh, chain(2_000)]) }
  let chainLarge = median { measure([dsh, chain(20_000)]) }
  rows.append(linearRow("20,000 chained wheres", small: chainSmall, large: chainLarge))

  // A CSV header of a million columns.
  func wide(_ n: Int) -> String {
    let header = (0..<n).map { "c\($0)" }.joined(separator: ",")
    let path = benchFile(
      "wide-\(n).csv", header + "\n" + Array(repeating: "1", count: n).joined(separator: ",") + "\n")
    return benchFile("wide-\(n).dsh", "show csv \"\(path)\"\n")
  }
  let wideSmall = median { measure([dsh, wide(100_000)]) }
  let wideLarge = median { measure([dsh, wide(1_000_000)]) }
  rows.append(linearRow("show a CSV of 1,000,000 columns", small: wideSmall, large: wideLarge))
  // Issue 33: a 200,000-column CSV with one row, in under 5 s and 500 MB (each column had a
  // 56 KB date cache: 5.7 GB for 100,000 columns).
  let wideMiddle = median { measure([dsh, wide(200_000)]) }
  rows.append(
    Row(
      what: "show a CSV of 200,000 columns: time and peak memory", dsh: seconds(wideMiddle.seconds),
      other: "peak " + megabytes(wideMiddle.peakKilobytes), figure: megabytes(wideMiddle.peakKilobytes),
      target: "< 5 s, < 500 MB",
      met: wideMiddle.status == 0 && wideMiddle.seconds < 5 && wideMiddle.peakKilobytes < 500 * 1024))

  // One name rebound 400,000 times: memory must not grow with the script.
  let rebindSmall = median {
    measure([dsh, benchFile("rebind-40000.dsh", String(repeating: "let x = [1, 2, 3]\n", count: 40_000))])
  }
  let rebindLarge = median {
    measure([dsh, benchFile("rebind-400000.dsh", String(repeating: "let x = [1, 2, 3]\n", count: 400_000))])
  }
  rows.append(
    Row(
      what: "rebind one name 400,000 times: peak memory", dsh: megabytes(rebindLarge.peakKilobytes),
      other: "40,000 times: " + megabytes(rebindSmall.peakKilobytes),
      figure: String(format: "%.2f×", Double(rebindLarge.peakKilobytes) / Double(rebindSmall.peakKilobytes)),
      target: "≤ 1.5× (bounded)",
      met: rebindLarge.status == 0 && rebindLarge.peakKilobytes <= rebindSmall.peakKilobytes * 3 / 2))

  // JSON records: peak memory against the file's size, and against Python's json module.
  let jsonPath = dataFolder + "/records.json"
  if fileSize(jsonPath) == 0 {
    // Written in chunks: a bench grown by a 53 MB string would hide the peaks it measures.
    var random = SeededNumbers(seed: 11)
    let teams = ["Core", "Apps", "Data", "Web", "Ops"]
    _ = FileManager.default.createFile(atPath: jsonPath, contents: nil)
    guard let handle = FileHandle(forWritingAtPath: jsonPath) else { fatalError("cannot write \(jsonPath)") }
    var text = "["
    for i in 0..<400_000 {
      if i > 0 { text += ",\n" }
      text += "{\"id\": \(i), \"name\": \"Person \(i)\", \"email\": \"p\(i)@example.com\", "
      text += "\"team\": \"\(teams[random.next(5)])\", \"age\": \(20 + random.next(46)), "
      text += "\"score\": \(random.next(10_000)).\(random.next(100)), \"active\": \(random.next(2) == 0)}"
      if text.utf8.count > 1 << 20 {
        handle.write(Data(text.utf8))
        text = ""
      }
    }
    handle.write(Data((text + "]\n").utf8))
    try? handle.close()
  }
  let jsonBytes = fileSize(jsonPath)
  let json = median {
    measure([
      dsh, "-c", "let j = json \"\(jsonPath)\"", "-c", "show j | where age > 60 | sort by name | limit 3",
    ])
  }
  let pythonJSON = median {
    measure(["python3", "-c", "import json, sys; d = json.load(open(sys.argv[1])); print(len(d))", jsonPath])
  }
  let ratio = Double(json.peakKilobytes * 1024) / Double(jsonBytes)
  rows.append(
    Row(
      what: "json of 400,000 records (\(jsonBytes / 1_000_000) MB): peak memory",
      dsh: megabytes(json.peakKilobytes) + ", " + seconds(json.seconds),
      other: "python3 json.load: " + megabytes(pythonJSON.peakKilobytes) + ", " + seconds(pythonJSON.seconds),
      figure: String(format: "%.1f× the file", ratio), target: "≤ 3× the file",
      met: json.status == 0 && ratio <= 3))

  // A server that never stops sending: refused at the size limit, quickly, in bounded memory.
  do {
    let (server, port) = try startTestServer()
    let endless = median { measure([dsh, "-c", "show http \"http://127.0.0.1:\(port)/endless\""]) }
    server.terminate()
    let refused = endless.status != 0 && endless.standardError.contains("larger than 100 MB")
    rows.append(
      Row(
        what: "http: a server that never stops sending",
        dsh: seconds(endless.seconds) + ", " + megabytes(endless.peakKilobytes),
        other: "refused at maxsize 100 MB", figure: refused ? "refused" : "NOT refused",
        target: "refused, < 300 MB", met: refused && endless.peakKilobytes < 300 * 1024))
  } catch {
    print("http measurement failed: \(error)")
  }
}
