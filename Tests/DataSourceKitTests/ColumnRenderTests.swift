import Foundation
import Testing

@testable import DataSourceKit
@testable import DataSourceKitRendering
@testable import DataSourceKitValues

/// `show` of a provider with columns reads its cells from the columns.
///
/// A batch of rows at a time, without making items. The text must be the one made from the items, byte for byte.
@Suite("Tables drawn from columns")
struct ColumnRenderTests {
  /// The table of `provider`'s fields, from its items or from its columns.
  static func drawn(
    _ provider: any DataProvider<Value> & ColumnReadable, mode: RenderMode, width: Int, fromColumns: Bool,
    windows: [Range<Int>]? = nil
  ) -> String {
    let presenter = ClosurePresenter<Value>(style: .basic, reuseIdentifier: "record", label: "fields") {
      _, _ in ""
    }
    let view = ListView(dataSource: TableAdapter(provider: provider, presenter: presenter))
    let fields = provider.recordFields ?? []
    let readers = fromColumns ? fields.compactMap(provider.fieldBatches) : nil
    var text = ""
    Renderer.renderFields(
      of: view, fields: fields, windows: windows ?? [0..<view.totalRows],
      options: RenderOptions(mode: mode, width: width, showsFields: true), columns: readers
    ) { text += $0 }
    return text
  }

  @Test("texts with accents, wide and control characters, quotes, nulls, markers, dates and numbers")
  func sameText() async throws {
    var csv = "id,name,note,when,n,x,flag\n"
    let notes = [
      "plain", "Zoë", "résumé of a rather long café crème brûlée", "中文字", "tab\there", "\"say \"\"hi\"\"\"",
      "\"\"", "", "bell\u{7}", "NA",
    ]
    for i in 0..<300 {
      csv += "\(i),name \(i % 17),\(notes[i % notes.count]),2024-0\(i % 9 + 1)-1\(i % 9),"
      csv +=
        "\(i % 5 == 0 ? "" : String(i * 3)),\(i % 4 == 0 ? "NA" : String(Double(i) / 8)),\(i % 3 == 0 ? "" : "true")\n"
    }
    let provider = try await loadedCSV(csv)
    for mode in [RenderMode.box, .plain, .markdown] {
      for width in [40, 80, 200] {
        let fromItems = Self.drawn(provider, mode: mode, width: width, fromColumns: false)
        let fromColumns = Self.drawn(provider, mode: mode, width: width, fromColumns: true)
        #expect(fromColumns == fromItems, "\(mode) at \(width) columns")
      }
    }
    let windows = [0..<10, 290..<300]
    #expect(
      Self.drawn(provider, mode: .box, width: 80, fromColumns: true, windows: windows)
        == Self.drawn(provider, mode: .box, width: 80, fromColumns: false, windows: windows))
  }

  @Test("a cell of accented Latin text is measured and cut from its bytes as TextWidth cuts the string")
  func narrowTextCut() {
    let texts = [
      "zoë.dijkstra2@example.com", "ëëëëëëëë", "aé", "ÀÉÎÕÜ àéîõü ÿ", "ǅ", "plain ascii text", "é",
    ]
    for text in texts {
      var arena = CellArena(columns: 1, rows: 1)
      arena.append(.string(text))
      for width in 1...20 {
        for alignment in [TextWidth.Alignment.left, .right] {
          var written = ""
          var out = TextOutput(color: false) { written += $0 }
          arena.write(row: 0, column: 0, width: width, alignment: alignment, into: &out)
          out.flush()
          #expect(written == TextWidth.fit(text, to: width, alignment: alignment), "\(text) in \(width)")
        }
      }
      #expect(text.utf8.withContiguousStorageIfAvailable(CellArena.narrowWidth) ?? nil == TextWidth.of(text))
    }
  }

  @Test("CSV written from columns is the CSV written from items, sectioned or not, to a terminal or not")
  func sameCSV() async throws {
    var csv = "id,name,note,n,x\n"
    let notes = ["plain", "Zoë", "a, \"quoted\"", "\"\"", "", "tab\there", "bell\u{7}", "line\u{1B}[2J"]
    for i in 0..<200 {
      csv +=
        "\(i),name \(i % 7),\(notes[i % notes.count].contains(",") ? "\"a, \"\"quoted\"\"\"" : notes[i % notes.count]),"
      csv += "\(i % 5 == 0 ? "" : String(i * 3)),\(i % 4 == 0 ? "" : String(Double(i) / 8))\n"
    }
    let provider = try await loadedCSV(csv)
    let sectioned = DerivedProvider.stage(
      .section(SortTerm(expression: .field(["name"]), direction: .ascending)), over: provider,
      label: "section",
      notes: nil)
    try await sectioned.load()
    for source in [provider, sectioned] as [any DataProvider<Value> & ColumnReadable] {
      let presenter = ClosurePresenter<Value>(style: .basic, reuseIdentifier: "record", label: "fields") {
        _, _ in ""
      }
      let view = ListView(dataSource: TableAdapter(provider: source, presenter: presenter))
      let fields = source.recordFields ?? []
      for toTerminal in [false, true] {
        for windows in [[0..<view.totalRows], [0..<5, 190..<200]] {
          var fromItems = ""
          Renderer.render(
            view.layout(windows: windows),
            options: RenderOptions(mode: .csv, showsFields: true, toTerminal: toTerminal)
          ) { fromItems += $0 }
          var fromColumns = ""
          Renderer.renderFieldsCSV(
            of: view, fields: fields, windows: windows, columns: fields.compactMap(source.fieldBatches),
            escaping: toTerminal
          ) { fromColumns += $0 }
          #expect(fromColumns == fromItems, "terminal \(toTerminal), \(windows)")
        }
      }
    }
  }
}
