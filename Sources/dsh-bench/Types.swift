// Issue 12's measures: typed loading and expressions over 1M rows, whole processes, beside
// DuckDB's CLI (PyPI `duckdb-cli`; DUCKDB names the binary, else `duckdb` on PATH).
import DataSourceKit
import DataSourceKitValues
import Foundation

/// Writes 1M orders.
///
/// Each has an id, an ISO date, a price (double), a quantity (int) and a rating that is `NA`
/// in about 1 row in 100. With `plain`, the same shape without dates and markers: the day as a
/// day number, the rating empty where it was `NA` (what today's inference loads).
func generateOrders(path: String, rows: Int, plain: Bool) {
  var random = SeededNumbers(seed: 12)
  _ = FileManager.default.createFile(atPath: path, contents: nil)
  guard let handle = FileHandle(forWritingAtPath: path) else { fatalError("cannot write \(path)") }
  var chunk = "id,day,price,qty,rating\n"
  for id in 1...rows {
    let day = 10_957 + random.next(7_300)
    let price = String(format: "%.2f", Double(random.next(100_000)) / 100)
    let qty = 1 + random.next(20)
    // The plain rows have the typed ones' bytes, less their dates and markers: the day number
    // and the blank rating padded with spaces (read as the number, and as null) to the width
    // of a date and of NA. Reading costs per byte, so files of different sizes would measure
    // their sizes, not the typing.
    let rating =
      random.next(100) == 0 ? (plain ? "  " : "NA") : String(format: "%.1f", Double(random.next(50)) / 10)
    let dayText =
      plain
      ? String(repeating: " ", count: 10 - String(day).count) + String(day) : CalendarDate.isoText(days: day)
    chunk += "\(id),\(dayText),\(price),\(qty),\(rating)\n"
    if chunk.utf8.count > 1 << 20 {
      handle.write(Data(chunk.utf8))
      chunk = ""
    }
  }
  handle.write(Data(chunk.utf8))
  try? handle.close()
}

/// DuckDB's CLI, when there is one.
func duckDB() -> String? {
  if let named = ProcessInfo.processInfo.environment["DUCKDB"],
    FileManager.default.isExecutableFile(atPath: named)
  {
    return named
  }
  for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
    let candidate = "\(folder)/duckdb"
    if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
  }
  return nil
}

@MainActor func measureTypes() {
  let orders = dataFolder + "/orders-1m.csv"
  let plainOrders = dataFolder + "/orders-1m-plain.csv"
  // Made again when missing, or when the plain file is not the typed one's size (an older one).
  if fileSize(orders) == 0 || fileSize(plainOrders) != fileSize(orders) {
    print("generating \(orders) and \(plainOrders) …")
    generateOrders(path: orders, rows: rowCount, plain: false)
    generateOrders(path: plainOrders, rows: rowCount, plain: true)
  }

  // 1. Loading with a date column and a null option, against the same rows without either: the
  //    two in turn, five times each (a tenth of a second each, at the noise of a busy machine).
  let (typed, plain) = inTurn(
    { measure([dsh, "-c", "let o = csv \"\(orders)\" null \"NA\"", "-c", "show o rows -1.."]) },
    { measure([dsh, "-c", "let o = csv \"\(plainOrders)\"", "-c", "show o rows -1.."]) })
  rows.append(
    Row(
      what: "load 1M orders: date column + null \"NA\" (median of 5 in turn)", dsh: seconds(typed.seconds),
      other: "same rows and bytes, no dates or markers: " + seconds(plain.seconds),
      figure: String(format: "%.2f×", typed.seconds / plain.seconds), target: "≤ 1.1×",
      met: typed.seconds <= 1.1 * plain.seconds))

  // 2. extend + where over 1M rows, printing the matches as CSV, against DuckDB doing the same.
  let threshold = 19_000
  let dshQuery = median {
    measure([
      dsh, "-c", "let o = csv \"\(orders)\" null \"NA\"", "-c",
      "show o | extend total = price * qty | where total > \(threshold) as csv",
    ])
  }
  guard let duck = duckDB() else {
    rows.append(
      Row(
        what: "extend total = price * qty | where total > X", dsh: seconds(dshQuery.seconds),
        other: "DuckDB CLI not found (pip install duckdb-cli; DUCKDB=path)", figure: "—", target: "≤ 1.0×",
        met: false))
    return
  }
  let duckQuery = median {
    measure([
      duck, "-csv", "-c",
      "SELECT *, price * qty AS total FROM read_csv('\(orders)', nullstr = 'NA') WHERE price * qty > \(threshold)",
    ])
  }
  rows.append(
    Row(
      what: "extend total = price * qty | where total > X, 1M rows", dsh: seconds(dshQuery.seconds),
      other: "DuckDB CLI: " + seconds(duckQuery.seconds),
      figure: String(format: "%.2f×", dshQuery.seconds / duckQuery.seconds), target: "≤ 1.0×",
      met: dshQuery.seconds <= duckQuery.seconds))
}
