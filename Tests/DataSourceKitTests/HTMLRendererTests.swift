import Testing

@testable import DataSourceKit
@testable import DataSourceKitRendering
@testable import DataSourceKitValues

/// The HTML page's structure: what UIKit would draw, in UIKit's order. (Issue 16 adds the checks
/// of the drawn pictures in headless Chromium.)
@Suite("HTML pages")
@MainActor
struct HTMLRendererTests {
  func page(_ styles: [CellStyle], accessory: CellAccessory = .none, options: HTMLOptions = HTMLOptions())
    async throws
    -> String
  {
    let children = styles.map { style in
      TableAdapter(
        provider: ArrayProvider([["Ada <Lovelace>", "London"]]),
        presenter: ClosurePresenter<[String]>(style: style, accessory: accessory) { row, _ in
          row[0]
        } detail: {
          row, _ in
          row[1]
        }
      ).header { _ in "Section \(style.rawValue)" }
    }
    let screen = ComposedDataSource(children)
    try await screen.load()
    let view = ListView(dataSource: screen)
    return Renderer.renderHTML(view.layout(windows: [0..<view.totalRows]), options: options)
  }

  @Test("each style puts its labels in UIKit's order, text escaped, headers above")
  func styles() async throws {
    let html = try await page([.basic, .subtitle, .value1, .value2], accessory: .disclosure)
    #expect(html.hasPrefix("<!DOCTYPE html>"))
    #expect(!html.contains("<script"))
    #expect(
      html.contains("<div class=\"content basic\"><span class=\"text\">Ada &lt;Lovelace&gt;</span></div>"))
    #expect(
      html.contains(
        "<div class=\"content subtitle\"><span class=\"stack\"><span class=\"text\">Ada &lt;Lovelace&gt;</span><span class=\"detail\">London</span></span></div>"
      ))
    #expect(
      html.contains(
        "<div class=\"content value2\"><span class=\"text\">Ada &lt;Lovelace&gt;</span><span class=\"detail\">London</span></div>"
      ))
    #expect(html.components(separatedBy: "<span class=\"accessory disclosure\"></span>").count == 5)
    #expect(html.components(separatedBy: "<div class=\"header\">Section").count == 5)
    // A table view shows no count, and a whole view is shown whole.
    #expect(!html.contains("<div class=\"count\">"))
  }

  @Test("bidirectional overrides in data are shown, not obeyed, in HTML and SVG; marks are kept")
  func bidiShown() async throws {
    // A right-to-left override in one value made the rest of its line read backwards.
    let adapter = TableAdapter(
      provider: ArrayProvider(["evil\u{202E}txt.exe", "a\u{2066}b\u{200F}c"]),
      presenter: ClosurePresenter<String>(style: .basic) { item, _ in item })
    try await adapter.load()
    let snapshot = ListView(dataSource: adapter).layout(windows: [0..<2])
    for page in [Renderer.renderHTML(snapshot, options: HTMLOptions()), Renderer.renderSVG(snapshot)] {
      #expect(page.contains("evil\\u{202E}txt.exe"))
      // A mark sets the direction of the characters beside it only: right-to-left data keeps it.
      #expect(page.contains("a\\u{2066}b\u{200F}c"))
      #expect(!page.unicodeScalars.contains { (0x202A...0x202E).contains($0.value) || $0.value == 0x2066 })
    }
    // A terminal still shows every one, marks included: its line is not a paragraph of a cell's.
    #expect(TextWidth.displayable("\u{200E}a\u{200F}b\u{061C}") == "\\u{200E}a\\u{200F}b\\u{61C}")
  }

  @Test("table style, appearance and width reach the page")
  func options() async throws {
    let html = try await page(
      [.basic], options: HTMLOptions(tableStyle: .insetGrouped, dark: true, width: 375, title: "A & B"))
    #expect(html.contains("<body class=\"dark\">"))
    #expect(html.contains("body.dark { --bg: #000000;"))
    #expect(html.contains("<div class=\"table insetGrouped\">"))
    #expect(html.contains("style=\"width: 375px\""))
    #expect(html.contains("<title>A &amp; B</title>"))
  }

  @Test("a window says how many rows it shows; a placeholder stands in for the rows")
  func windowsAndPlaceholders() async throws {
    let numbers = TableAdapter(
      provider: ArrayProvider(Array(0..<100)),
      presenter: ClosurePresenter<Int>(style: .basic) { n, _ in "\(n)" })
    try await numbers.load()
    let html = Renderer.renderHTML(ListView(dataSource: numbers).layout(windows: [10..<20]))
    #expect(html.contains("<div class=\"count\">100 rows (10 shown)</div>"))
    #expect(html.contains("<div class=\"gap\">⋮</div>"))
    let empty = TableAdapter(
      provider: ArrayProvider([Int]()), presenter: ClosurePresenter<Int>(style: .basic) { n, _ in "\(n)" }
    ).placeholder(empty: "No rows")
    try await empty.load()
    let covered = Renderer.renderHTML(ListView(dataSource: empty).layout(windows: [0..<1]))
    #expect(covered.contains("<div class=\"placeholder\">No rows</div>"))
  }
}
