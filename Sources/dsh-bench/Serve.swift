// Issue 58: a served view's edit costs the change, and a page's request the rows it draws.
//   Scripts/bench.sh serve
//
// A view of 100k and 1M rows in 1,000 sections is served; the same script of single-row
// updates runs with it served and without (whole processes, and `set timer on`'s time of each
// update); then, dsh left serving, a page's window of 60 rows in the middle of the view is
// asked for as the page asks for it when it scrolls there (curl's time of the request).
import Foundation

/// `rows` rows of id, name and team (1,000 teams), written once.
private func servedTable(rows: Int) -> String {
  let path = dataFolder + "/served-\(rows / 1_000)k.csv"
  guard fileSize(path) == 0 else { return path }
  var text = "id,name,team\n"
  text.reserveCapacity(rows * 24)
  for id in 0..<rows { text += "\(id),name \(id),team \(id % 1_000)\n" }
  try? text.write(toFile: path, atomically: true, encoding: .utf8)
  return path
}

/// A script that builds the sectioned view, serves it or not, and makes `edits` updates.
private func serveScript(path: String, rows: Int, serving: Bool, edits: Int) -> String {
  var lines = [
    "set timer on", "let p = csv \"\(path)\" key id",
    "let v = table p | section by team with cell basic \"{name}\" | header \"team {section}\"",
    "show v rows 0..5",
  ]
  if serving { lines.append("serve v on 0") }
  for k in 0..<edits { lines.append("update p set name = \"B\(k)\" where id == \(6 + k * (rows / edits))") }
  lines.append("quit")
  let script = dataFolder + "/serve-\(rows)-\(serving)-\(edits).dsh"
  try? (lines.joined(separator: "\n") + "\n").write(toFile: script, atomically: true, encoding: .utf8)
  return script
}

/// Seconds of each request a page makes for a 60-row window in the middle of the served view,
/// dsh idle at its prompt's place (after its last statement, still serving).
@MainActor
private func windowRequests(path: String, rows: Int, count: Int) -> [Double] {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: dsh)
  process.arguments = [
    "-c", "let p = csv \"\(path)\" key id",
    "-c", "let v = table p | section by team with cell basic \"{name}\" | header \"team {section}\"",
    "-c", "serve v on 0",
  ]
  let output = Pipe()
  process.standardOutput = output
  process.standardError = FileHandle.nullDevice
  guard (try? process.run()) != nil else { return [] }
  defer {
    process.terminate()
    process.waitUntilExit()
  }
  var said = ""
  while !said.contains("?token=") {
    let data = output.fileHandleForReading.availableData
    if data.isEmpty { return [] }
    said += String(decoding: data, as: UTF8.self)
  }
  guard let line = said.split(separator: "\n").first(where: { $0.contains("?token=") }),
    let start = line.range(of: "http://")
  else { return [] }
  let address = line[start.lowerBound...].replacingOccurrences(of: "/?token=", with: "/window?token=")
  var times: [Double] = []
  for k in 0..<count {
    let from = rows / 2 + k * 97
    let curl = Process()
    curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    curl.arguments = [
      "curl", "-s", "-o", "/dev/null", "-w", "%{time_total}", "\(address)&from=\(from)&to=\(from + 60)",
    ]
    let pipe = Pipe()
    curl.standardOutput = pipe
    guard (try? curl.run()) != nil else { return [] }
    curl.waitUntilExit()
    let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    if let seconds = Double(text) { times.append(seconds) }
  }
  return times
}

@MainActor
func measureServe() {
  let edits = 200
  for size in [100_000, 1_000_000] {
    let path = servedTable(rows: size)
    // Whole processes: the script with its updates, less the same without them.
    func perEdit(serving: Bool) -> (whole: Double, timer: Double) {
      let none = median { measure([dsh, serveScript(path: path, rows: size, serving: serving, edits: 0)]) }
      let many = median {
        measure([dsh, serveScript(path: path, rows: size, serving: serving, edits: edits)])
      }
      if many.status != 0 {
        print("the served script at \(size) rows failed: \(many.standardError.prefix(300))")
      }
      let times = statementTimes(many.standardError).suffix(edits).sorted()
      return (
        max(0, many.seconds - none.seconds) / Double(edits), times.isEmpty ? .nan : times[times.count / 2]
      )
    }
    let served = perEdit(serving: true)
    let plain = perEdit(serving: false)
    rows.append(
      Row(
        what:
          "\(size / 1_000)k rows in 1,000 sections, served: one-row update (whole process per edit; timer median)",
        dsh: String(format: "%.2f ms; %.2f ms", served.whole * 1_000, served.timer * 1_000),
        other: String(format: "not served: %.2f ms; %.2f ms", plain.whole * 1_000, plain.timer * 1_000),
        figure: String(format: "+%.2f ms", (served.whole - plain.whole) * 1_000), target: "≤ 20 ms per edit",
        met: served.whole <= 0.020))
    let windows = windowRequests(path: path, rows: size, count: 20).sorted()
    if windows.isEmpty {
      print("serve: no window answered at \(size) rows")
      continue
    }
    let middle = windows[windows.count / 2]
    rows.append(
      Row(
        what: "  a page scrolled to the middle: a 60-row window (curl, median of 20)",
        dsh: String(format: "%.2f ms", middle * 1_000),
        other: String(format: "slowest %.2f ms", (windows.last ?? .nan) * 1_000),
        figure: "", target: "O(rows drawn)", met: middle <= 0.020))
  }
}
