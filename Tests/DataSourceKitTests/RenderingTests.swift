import Testing

@testable import DataSourceKit
@testable import DataSourceKitRendering
@testable import DataSourceKitValues

@Suite("Text width and rendering")
struct RenderingTests {
  @Test(
    "display width",
    arguments: [
      ("abc", 3), ("Zoë", 3), ("e\u{301}", 1), ("李小龍", 6), ("😀", 2), ("👍🏽", 2), ("👨‍👩‍👧", 2), ("🇫🇷", 2), ("❤️", 2),
      ("", 0),
    ])
  func widths(text: String, width: Int) {
    #expect(TextWidth.of(text) == width)
  }

  @Test("cutting keeps within the width and ends in an ellipsis")
  func truncation() {
    #expect(TextWidth.truncate("abcdef", to: 4) == "abc…")
    #expect(TextWidth.truncate("李小龍李", to: 5) == "李小…")
    #expect(TextWidth.fit("ab", to: 4, alignment: .right) == "  ab")
    #expect(TextWidth.of(TextWidth.fit("李小龍李小龍", to: 7)) == 7)
  }

  func snapshot(_ items: [Value], style: CellStyle = .basic, detail: Bool = false) -> ViewSnapshot<Value> {
    let presenter = ClosurePresenter<Value>(style: style, accessory: .disclosure) { item, _ in
      item.value(atPath: ["name"])?.description ?? item.description
    } detail: { item, _ in
      detail ? item.value(atPath: ["team"])?.description ?? "" : ""
    }
    let source = SupplementaryDecorator(
      wrapping: TableAdapter(provider: ArrayProvider(items), presenter: presenter), kind: .header, label: "h"
    ) { c in "People (\(c.count))" }
    return ListView(dataSource: source).layout(windows: [0..<items.count])
  }

  let people = [
    record(["name": .string("Ada"), "team": .string("Research")]),
    record(["name": .string("李小龍"), "team": .string("Eng")]),
  ]

  @Test("box lines are all the requested width, CJK included")
  func boxWidth() {
    let text = Renderer.render(
      snapshot(people, style: .value1, detail: true), options: RenderOptions(width: 40))
    let lines = text.split(separator: "\n")
    #expect(lines.count == 6)
    #expect(lines.allSatisfy { TextWidth.of(String($0)) == 40 })
    #expect(lines[4].hasSuffix("Eng › │"))
  }

  @Test("subtitle puts the detail on its own line")
  func subtitle() {
    let text = Renderer.render(
      snapshot(people, style: .subtitle, detail: true), options: RenderOptions(mode: .plain, width: 30))
    #expect(
      text
        == "People (2)\n  Ada                        ›\n    Research\n  李小龍                     ›\n    Eng\n")
  }

  @Test("json keeps sections, headers and item values")
  func json() {
    let text = Renderer.render(snapshot(people), options: RenderOptions(mode: .json))
    #expect(
      text == """
        [
          {"header": "People (2)", "footer": null, "items": [
            {"name": "Ada", "team": "Research"},
            {"name": "李小龍", "team": "Eng"}
          ]}
        ]

        """)
  }

  @Test("csv quotes what needs quoting")
  func csv() {
    let items = [
      record(["a": .string("x,y"), "b": .string("say \"hi\"")]), record(["a": .null, "b": .int(2)]),
    ]
    let text = Renderer.render(snapshot(items), options: RenderOptions(mode: .csv))
    #expect(text == "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n,2\n")
  }

  @Test("csv writes empty text quoted and null empty, and reads back the same values")
  func csvEmptyText() async throws {
    let items = [record(["a": .string(""), "b": .int(1)]), record(["a": .null, "b": .int(2)])]
    let text = Renderer.render(snapshot(items), options: RenderOptions(mode: .csv))
    #expect(text == "a,b\n\"\",1\n,2\n")
    let read = try await loadedCSV(text)
    #expect(read.allItems[0].map { $0.value(atPath: ["a"]) } == [.string(""), .null])
  }

  @Test("a record table right-aligns numbers and fits the width")
  func recordTable() {
    let items = [
      record(["n": .int(5), "s": .string("a long piece of text that will not fit")]),
      record(["n": .int(123), "s": .null]),
    ]
    let text = Renderer.render(snapshot(items), options: RenderOptions(width: 30, showsFields: true))
    let lines = text.split(separator: "\n").map(String.init)
    #expect(lines.allSatisfy { TextWidth.of($0) <= 30 })
    #expect(lines.contains("│   5 │ a long piece of tex… │"))
    // A null is drawn as the word, apart from empty text.
    #expect(lines.contains("│ 123 │ null                 │"))
    let empty = Renderer.render(
      snapshot([record(["n": .int(1), "s": .string("")])]),
      options: RenderOptions(width: 30, showsFields: true))
    #expect(empty.contains("│ 1 │   │"), "\(empty)")
  }

  @Test("markdown escapes pipes and marks numeric columns")
  func markdown() {
    let items = [record(["n": .int(1), "s": .string("a|b")])]
    let text = Renderer.render(snapshot(items), options: RenderOptions(mode: .markdown, showsFields: true))
    #expect(text == "### People (1)\n\n| n | s |\n| ---: | --- |\n| 1 | a\\|b |\n")
  }

  @Test("column widths narrow as one column at a time off the widest would, in one pass")
  func narrowedWidths() {
    // The rule as first written: one column off the first widest until the total fits.
    func stepwise(_ widths: [Int], _ available: Int) -> [Int] {
      var widths = widths
      var total = widths.reduce(0, +)
      while total > available, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }),
        widths[widest] > 3
      {
        widths[widest] -= 1
        total -= 1
      }
      return widths
    }
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<2_000 {
      let widths = (0..<Int.random(in: 0...12, using: &generator)).map { _ in
        Int.random(in: 0...40, using: &generator)
      }
      let available = Int.random(in: -10...200, using: &generator)
      #expect(
        RecordTableRenderer.narrowed(widths, toFit: available) == stepwise(widths, available),
        "\(widths) in \(available)")
    }
  }
}
