import Foundation
import Testing

/// Headless Chromium, which draws the pages and pictures dsh writes.
///
/// `Scripts/test.sh` installs Debian's `chromium` when it is missing. Where it is not installed
/// the picture tests are skipped with a message, except under `CI`, where that is a failure.
enum Chromium {
  static let path: String? = {
    if let named = ProcessInfo.processInfo.environment["CHROMIUM"] { return named }
    return ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
  }()

  static var isMissingOutsideCI: Bool {
    path == nil && ProcessInfo.processInfo.environment["CI"] == nil
  }

  /// Runs the browser headless on `file` with `arguments`, and returns what it printed.
  static func run(_ arguments: [String], file: String, width: Int, height: Int) throws -> String {
    guard let path else {
      throw PNGImage.Failure(
        description: "chromium is not installed; Scripts/test.sh installs it (apt-get install chromium)")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments =
      [
        "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
        "--window-size=\(width),\(height)",
        "--user-data-dir=" + NSTemporaryDirectory() + "dsh-chromium-profile",
      ] + arguments + ["file://" + file]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = readAll(output.fileHandleForReading)
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
  }

  /// The picture the browser draws of `file` in a window of the given size.
  static func screenshot(of file: String, width: Int, height: Int) throws -> PNGImage {
    let png = NSTemporaryDirectory() + "dsh-shot-\(UUID().uuidString).png"
    defer { try? FileManager.default.removeItem(atPath: png) }
    _ = try run(["--screenshot=" + png], file: file, width: width, height: height)
    return try PNGImage(contentsOf: png)
  }

  /// Where the browser laid out the page's cells, labels, accessories, headers and footers.
  static func geometry(ofPage html: String, width: Int) throws -> PageGeometry {
    let file = NSTemporaryDirectory() + "dsh-page-\(UUID().uuidString).html"
    defer { try? FileManager.default.removeItem(atPath: file) }
    // Measured by a script added to a copy of the page (the page itself has none), and written
    // into the document, which --dump-dom prints.
    let measuring = html.replacingOccurrences(of: "</body>", with: PageGeometry.script + "</body>")
    try measuring.write(toFile: file, atomically: true, encoding: .utf8)
    let dom = try run(["--dump-dom"], file: file, width: width, height: 900)
    guard let start = dom.range(of: "<pre id=\"geometry\">"),
      let end = dom.range(of: "</pre>", range: start.upperBound..<dom.endIndex)
    else {
      throw PNGImage.Failure(description: "the browser did not run the measuring script:\n\(dom.prefix(500))")
    }
    let json = dom[start.upperBound..<end.lowerBound]
      .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
      .replacingOccurrences(of: "&amp;", with: "&")
    var geometry = try JSONDecoder().decode(PageGeometry.self, from: Data(json.utf8))
    // The page centres its screen in a wider window: positions are taken from the screen's edge.
    let left = geometry.all("screen").first?.x ?? 0
    for i in geometry.boxes.indices { geometry.boxes[i].x -= left }
    return geometry
  }
}

/// The boxes the browser laid out, in CSS pixels (points).
struct PageGeometry: Decodable {
  struct Box: Decodable {
    /// What the element is: cell, text, detail, accessory, header, footer, segment, screen.
    var kind: String
    /// The classes of the element and of its cell's content, as `content value1`.
    var classes: String
    var text: String
    var x, y, width, height: Double
    var color: String
    var background: String
    var right: Double { x + width }
    var bottom: Double { y + height }
    var middle: Double { y + height / 2 }
  }
  var background: String
  var boxes: [Box]

  func all(_ kind: String) -> [Box] { boxes.filter { $0.kind == kind } }

  /// The boxes of one kind inside the cell at `index` (in page order).
  func inCell(_ index: Int, _ kind: String) -> Box? {
    let cell = all("cell")[index]
    return boxes.first { $0.kind == kind && $0.y >= cell.y - 0.5 && $0.bottom <= cell.bottom + 0.5 }
  }

  static let script = """
    <script>
    const boxes = [];
    const kinds = [["screen", ".screen"], ["cell", ".cell"], ["text", ".cell .text"], ["detail", ".cell .detail"],
      ["accessory", ".cell .accessory"], ["header", ".header"], ["footer", ".footer"], ["segment", ".segments span"],
      ["placeholder", ".placeholder"], ["card", ".card"]];
    for (const [kind, selector] of kinds) {
      for (const element of document.querySelectorAll(selector)) {
        const r = element.getBoundingClientRect();
        const style = getComputedStyle(element);
        const content = element.closest(".content");
        boxes.push({ kind, classes: element.className + (content ? " " + content.className : ""),
          text: element.innerText, x: r.left, y: r.top, width: r.width, height: r.height,
          color: style.color, background: style.backgroundColor });
      }
    }
    const pre = document.createElement("pre");
    pre.id = "geometry";
    pre.textContent = JSON.stringify({ background: getComputedStyle(document.body).backgroundColor, boxes });
    document.body.appendChild(pre);
    </script>
    """
}

@Suite(
  "Pictures drawn by headless Chromium", .serialized, .tags(.browser),
  .disabled(if: Chromium.isMissingOutsideCI, "chromium is not installed: Scripts/test.sh installs it"))
struct PictureTests {
  /// What dsh prints for `statements`, run as a batch.
  private func output(_ statements: [String]) throws -> String {
    let result = try DSHProcess.run(statements.flatMap { ["-c", $0] })
    #expect(result.status == 0, "\(result.output.prefix(400))")
    return result.output
  }

  private static let people = "let people = csv \"Scripts/data/people.csv\" key id | sort by name"

  @Test("the four cell styles are laid out as UIKit lays them out")
  func cellStyles() throws {
    let page = try output([
      Self.people,
      """
      show compose (table people | limit 1 with cell basic "{name}" accessory disclosure),
        (table people | limit 1 with cell subtitle "{name}" detail "{email}" accessory checkmark),
        (table people | limit 1 with cell value1 "{name}" detail "{team}" accessory detail),
        (table people | limit 1 with cell value2 "{name}" detail "{email}") as html
      """,
    ])
    let page393 = try Chromium.geometry(ofPage: page, width: 393)
    let cells = page393.all("cell")
    try #require(cells.count == 4)
    #expect(page393.all("screen").first?.width == 393)
    for (i, cell) in cells.enumerated() {
      // Rows are 44 points; a subtitle cell grows to fit its second line.
      if i == 1 { #expect(cell.height >= 44 && cell.height <= 60) } else { #expect(cell.height == 44) }
      #expect(cell.x == 0 && cell.width == 393)
    }
    // basic: the text inset 16 points, the chevron at the right edge, centred on the row.
    let basicText = try #require(page393.inCell(0, "text"))
    let chevron = try #require(page393.inCell(0, "accessory"))
    #expect(basicText.x == 16)
    #expect(chevron.right == 393 && chevron.x > 393 - 48)
    #expect(abs(chevron.middle - cells[0].middle) <= 1)
    // subtitle: the detail under the text, both at the text's inset.
    let subtitleText = try #require(page393.inCell(1, "text"))
    let subtitleDetail = try #require(page393.inCell(1, "detail"))
    #expect(subtitleDetail.y >= subtitleText.bottom - 1)
    #expect(subtitleDetail.x == subtitleText.x)
    #expect(subtitleDetail.height < subtitleText.height)
    // value1: the detail right-aligned and grey, beside the accessory.
    let value1Text = try #require(page393.inCell(2, "text"))
    let value1Detail = try #require(page393.inCell(2, "detail"))
    let info = try #require(page393.inCell(2, "accessory"))
    #expect(value1Detail.x > value1Text.x + 100)
    #expect(value1Detail.right <= info.x + 1 && value1Detail.right > info.x - 24)
    #expect(value1Detail.color == "rgb(138, 138, 142)")
    // value2: the small blue label right-aligned on the left, the detail after it.
    let value2Text = try #require(page393.inCell(3, "text"))
    let value2Detail = try #require(page393.inCell(3, "detail"))
    #expect(value2Text.right <= value2Detail.x)
    #expect(value2Text.color == "rgb(0, 122, 255)")
    #expect(value2Text.height < basicText.height + 1)
    #expect(value2Detail.x < 393 / 2)
  }

  @Test(
    "a segmented source inside a composition draws its control where it begins; a plain table's section header sticks while its rows scroll"
  )
  func composedSegmentsAndStickyHeaders() throws {
    let tabs =
      "let tabs = segmented everyone: (table people with cell basic \"{name}\"), menu: (table [\"Profile\"] with cell basic \"{.}\")"
    let composed = "show compose (table [\"Top\"] with cell basic \"{.}\" | header \"Menu\"), tabs"
    let page = try output([Self.people, tabs, composed + " as html"])
    let geometry = try Chromium.geometry(ofPage: page, width: 393)
    let segments = geometry.all("segment")
    #expect(segments.map(\.text) == ["everyone", "menu"], "\(page.prefix(2000))")
    // Below the first child's row, above the segmented child's rows.
    let cells = geometry.all("cell")
    try #require(cells.count == 11)
    #expect(segments.allSatisfy { $0.y > cells[0].bottom && $0.bottom < cells[1].y })
    let picture = try output([Self.people, tabs, composed + " as svg"])
    #expect(
      picture.contains(">everyone</text>") && picture.contains(">menu</text>"), "\(picture.prefix(1500))")
    // A plain table of two long sections, scrolled into the first: its header stays at the top.
    let long = try output([
      "let numbers = csv \"\(try Self.numbersCSV())\" | section by grp",
      "show table numbers with cell basic \"{id}\" | header \"group {section}\" as html",
    ])
    let scrolled = long.replacingOccurrences(
      of: "</body>", with: "<script>window.scrollTo(0, 1200)</script></body>")
    let scrolledGeometry = try Chromium.geometry(ofPage: scrolled, width: 393)
    let headers = scrolledGeometry.all("header")
    try #require(headers.count == 2)
    // The page did scroll: its first row is far above the top.
    #expect((scrolledGeometry.all("cell").first?.y ?? 0) < -1000)
    #expect(headers[0].text == "group 0" && abs(headers[0].y) < 1, "\(headers)")
    #expect(headers[1].y > 1200, "\(headers)")
  }

  /// A CSV of 200 rows in two groups of 100.
  static func numbersCSV() throws -> String {
    let path = NSTemporaryDirectory() + "dsh-sticky-\(UUID().uuidString).csv"
    var text = "id,grp\n"
    for id in 0..<200 { text += "\(id),\(id / 100)\n" }
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  @Test("table styles, headers, dark mode and devices change the page")
  func stylesAndSettings() throws {
    let grouped = try output([
      Self.people,
      "show table people | limit 2 with cell basic \"{name}\" style insetGrouped | header \"Team\" as html",
    ])
    let geometry = try Chromium.geometry(ofPage: grouped, width: 393)
    let header = try #require(geometry.all("header").first)
    #expect(header.text == "TEAM")  // UIKit's grouped headers are small capitals
    #expect(header.color == "rgb(138, 138, 142)")
    let cell = try #require(geometry.all("cell").first)
    #expect(cell.x == 16 && cell.width == 393 - 32)  // inset from both edges
    #expect(geometry.background == "rgb(255, 255, 255)")

    let dark = try output([
      "set appearance dark", "set device iPad", Self.people,
      "show table people | limit 2 with cell basic \"{name}\" | header \"Team\" as html",
    ])
    let darkGeometry = try Chromium.geometry(ofPage: dark, width: 820)
    #expect(darkGeometry.background == "rgb(0, 0, 0)")
    #expect(darkGeometry.all("screen").first?.width == 820)
    #expect(darkGeometry.all("header").first?.text == "Team")  // a plain table keeps the case
    #expect(darkGeometry.all("text").first?.color == "rgb(255, 255, 255)")
  }

  @Test("a segmented source draws its control with the selected segment")
  func segmentedControl() throws {
    let page = try output([
      Self.people,
      """
      let tabs = segmented all: (table people with cell basic "{name}"),
        design: (table people | where team == "Design" with cell basic "{name}")
      """,
      "switch tabs to design", "show tabs as html",
    ])
    let geometry = try Chromium.geometry(ofPage: page, width: 393)
    let segments = geometry.all("segment")
    #expect(segments.map(\.text) == ["all", "design"])
    try #require(segments.count == 2)
    #expect(segments[1].background == "rgb(255, 255, 255)" && segments[0].background == "rgba(0, 0, 0, 0)")
    #expect(segments[0].y == segments[1].y && segments[0].right <= segments[1].x)
    #expect(geometry.all("cell").count == 2)
    #expect(geometry.all("cell").first.map { $0.y > segments[0].bottom } == true)
  }

  /// The screen of the tour, as a picture: compared with a reference drawn before, so that a
  /// change to the look is seen (and recorded again with `DSH_RECORD=1`).
  @Test(
    "pictures match their references",
    arguments: [
      ("menu-light", "html", [] as [String]),
      ("menu-dark", "html", ["set appearance dark"]),
      ("menu-light", "svg", []),
    ])
  func reference(name: String, format: String, settings: [String]) throws {
    let screen = """
      show compose (table ["Profile", "Settings"] with cell basic "{.}" accessory disclosure style insetGrouped
        | header "Menu"), (table people | section by team | limit 3 with cell value1 "{name}" detail "{team}"
        | header "{section}" | footer "{count} people") as \(format)
      """
    let picture = try output(settings + [Self.people, screen])
    let file = NSTemporaryDirectory() + "dsh-picture-\(UUID().uuidString).\(format)"
    defer { try? FileManager.default.removeItem(atPath: file) }
    try picture.write(toFile: file, atomically: true, encoding: .utf8)
    let shot = try Chromium.screenshot(of: file, width: 393, height: 320)
    let reference = DSHProcess.packageRoot + "/Tests/dshTests/Fixtures/pictures/\(name)-\(format).png"
    if ProcessInfo.processInfo.environment["DSH_RECORD"] != nil {
      _ = try Chromium.run(["--screenshot=" + reference], file: file, width: 393, height: 320)
      return
    }
    let expected = try PNGImage(contentsOf: reference)
    // Fonts and antialiasing vary a little between browser versions; a moved row or a changed
    // colour changes far more than this.
    let share = shot.differingShare(from: expected)
    #expect(share < 0.02, "\(Int(share * 100))% of the pixels differ from \(reference)")
    // The background a user would see at the bottom left: grouped grey in light mode, black in dark.
    let corner = shot.rgb(x: 2, y: 318)
    let background: [Int] = settings.isEmpty ? [242, 242, 247] : [0, 0, 0]
    #expect([corner.r, corner.g, corner.b] == background)
  }

  @Test("an SVG draws the same picture as the page")
  func svgMatchesPage() throws {
    let view =
      "table people | limit 4 with cell subtitle \"{name}\" detail \"{email}\" accessory disclosure | header \"People\""
    var shots: [PNGImage] = []
    for format in ["html", "svg"] {
      let file = NSTemporaryDirectory() + "dsh-same-\(UUID().uuidString).\(format)"
      defer { try? FileManager.default.removeItem(atPath: file) }
      try output([Self.people, "show \(view) as \(format)"]).write(
        toFile: file, atomically: true, encoding: .utf8)
      shots.append(try Chromium.screenshot(of: file, width: 393, height: 280))
    }
    let share = shots[0].differingShare(from: shots[1])
    #expect(share < 0.03, "\(Int(share * 100))% of the pixels differ between the page and the SVG")
  }
}
