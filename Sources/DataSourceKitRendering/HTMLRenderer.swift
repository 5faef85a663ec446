import DataSourceKit
import DataSourceKitValues

/// The look of an HTML page: the table's style, light or dark, and the width of the device.
public struct HTMLOptions: Sendable, Equatable {
  /// How the sections are drawn.
  public var tableStyle: TableStyle
  /// Dark mode's colours instead of light mode's.
  public var dark: Bool
  /// The width of the screen in points (375 for an iPhone SE, 393 for an iPhone 15, 820 for an
  /// iPad).
  public var width: Int
  /// The page's title.
  public var title: String

  /// The fonts of a picture: the system's, then families that hold Chinese, Japanese and
  /// Korean, Arabic, Hebrew and emoji on the usual systems, ending in the generic family, so
  /// text in any script draws where a font for it is installed.
  static let fontFamilies = [
    "-apple-system", "\"SF Pro Text\"", "system-ui", "\"Helvetica Neue\"", "Arial", "\"Noto Sans\"",
    "\"PingFang SC\"", "\"Hiragino Sans\"", "\"Noto Sans CJK SC\"", "\"Noto Sans CJK JP\"",
    "\"Microsoft YaHei\"", "\"Malgun Gothic\"", "\"Noto Sans Arabic\"", "\"Noto Sans Hebrew\"",
    "\"Apple Color Emoji\"", "\"Segoe UI Emoji\"", "\"Noto Color Emoji\"", "sans-serif",
  ].joined(separator: ", ")

  /// A page of a plain table on an iPhone 15, in light mode.
  public init(tableStyle: TableStyle = .plain, dark: Bool = false, width: Int = 393, title: String = "dsh") {
    self.tableStyle = tableStyle
    self.dark = dark
    self.width = width
    self.title = title
  }
}

extension Renderer {
  /// One self-contained HTML page (inline CSS, no script, no network) that draws the view as an
  /// iOS table or collection view would: the system font, 44-point rows, the four cell styles
  /// laid out as UIKit lays them out, accessories, separators inset to the text, headers and
  /// footers, the section index, placeholders, and grids as cards.
  ///
  /// As a table view, the page shows no count of its own; when the rows were cut to a window it
  /// says how many it shows of how many, as the text modes do.
  /// - Complexity: O(sections + rows shown).
  public static func renderHTML<Item>(_ snapshot: ViewSnapshot<Item>, options: HTMLOptions = HTMLOptions())
    -> String
  {
    HTMLPage(snapshot: snapshot, options: options).render()
  }
}

/// The parts of a page of ``Renderer/renderHTMLParts(_:options:)``, for a page that draws a
/// window of a long view and takes the next window's parts as it scrolls.
public struct HTMLParts: Sendable, Equatable {
  /// From `<!DOCTYPE html>` to `<body …>`: the style, the title, the viewport.
  public var head: String
  /// What stands above the sections: the view's title and its segment control.
  public var top: String
  /// The `<div class="table …">` of the sections the window touches.
  public var table: String
  /// What stands below: the section index and the view's caption.
  public var bottom: String
  /// The page's width in points (the `<main>` is drawn that wide).
  public var width: Int
}

extension Renderer {
  /// A page's parts for a window of rows, marked for a script that places them: each section
  /// says its index (`data-section`) and each row its place in it (`data-row`); a section
  /// cut by the window draws its header only where it begins and its footer where it ends,
  /// with no gap mark (the script stands the rest of the list in for the rows not drawn).
  /// - Complexity: O(sections + rows shown).
  public static func renderHTMLParts<Item>(
    _ snapshot: ViewSnapshot<Item>, options: HTMLOptions = HTMLOptions()
  )
    -> HTMLParts
  {
    HTMLPage(snapshot: snapshot, options: options, marked: true).parts()
  }
}

/// Builds the page of ``Renderer/renderHTML(_:options:)``.
private struct HTMLPage<Item> {
  let snapshot: ViewSnapshot<Item>
  let options: HTMLOptions
  /// Rows and sections marked with their places; cut sections drawn without gap marks.
  var marked = false

  func render() -> String {
    let parts = parts()
    var bottom = parts.bottom
    if snapshot.shownRows < snapshot.totalRows {
      bottom += "<div class=\"count\">\(snapshot.totalRows) rows (\(snapshot.shownRows) shown)</div>\n"
    }
    return parts.head + """
      <main class="screen" style="width: \(options.width)px">
      \(parts.top)\(parts.table)\(bottom)</main>
      </body>
      </html>

      """
  }

  func parts() -> HTMLParts {
    var top = ""
    for line in snapshot.title { top += "<div class=\"view-title\">\(escape(line))</div>\n" }
    if let bar = snapshot.segments { top += segmentsHTML(bar) }
    let hasIndex = !(snapshot.indexTitles ?? []).isEmpty
    var table = "<div class=\"table \(options.tableStyle.rawValue)\(hasIndex ? " has-index" : "")\">\n"
    for section in snapshot.sections { table += sectionHTML(section) }
    table += "</div>\n"
    var bottom = ""
    if let titles = snapshot.indexTitles, !titles.isEmpty {
      bottom += "<div class=\"index\">" + titles.map { "<span>\(escape($0))</span>" }.joined() + "</div>\n"
    }
    for line in snapshot.caption { bottom += "<div class=\"view-caption\">\(escape(line))</div>\n" }
    let head = """
      <!DOCTYPE html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <meta name="viewport" content="width=\(options.width)">
      <title>\(escape(options.title))</title>
      <style>
      \(css)
      </style>
      </head>
      <body class="\(options.dark ? "dark" : "light")">

      """
    return HTMLParts(head: head, top: top, table: table, bottom: bottom, width: options.width)
  }

  /// A segmented control: its segments, the one shown marked.
  private func segmentsHTML(_ bar: SegmentBar) -> String {
    var html = "<div class=\"segments\">"
    for (i, name) in bar.names.enumerated() {
      html += "<span\(i == bar.selected ? " class=\"selected\"" : "")>\(escape(name))</span>"
    }
    return html + "</div>\n"
  }

  private func sectionHTML(_ section: SectionSnapshot<Item>) -> String {
    var html = marked ? "<section data-section=\"\(section.index)\">\n" : "<section>\n"
    // A segmented source composed among others: its control where it begins.
    if let bar = section.segments { html += segmentsHTML(bar) }
    // A marked window draws a cut section's header where it begins and its footer where it ends.
    let (gapBefore, gapAfter) = (section.gapBefore, section.gapAfter)
    if !(marked && gapBefore) {
      for line in section.header { html += "<div class=\"header\">\(escape(line))</div>\n" }
    }
    func row(_ row: RowSnapshot<Item>, _ kind: String) -> String {
      let place = marked ? " data-row=\"\(row.itemPath.item)\"" : ""
      return "<div class=\"\(kind)\"\(place)>\(cellHTML(row.cell))</div>\n"
    }
    if !section.placeholder.isEmpty {
      html += "<div class=\"placeholder\">"
      html += section.placeholder.map(escape).joined(separator: "<br>") + "</div>\n"
    } else if let layout = section.cardLayout {
      html += "<div class=\"grid\" style=\"--card-width: \(layout.width * 8)px\">\n"
      for shown in section.rows { html += row(shown, "card") }
      html += "</div>\n"
    } else if !section.rows.isEmpty {
      html += "<div class=\"group\">\n"
      if gapBefore && !marked { html += "<div class=\"gap\">⋮</div>\n" }
      for shown in section.rows { html += row(shown, "cell") }
      if gapAfter && !marked { html += "<div class=\"gap\">⋮</div>\n" }
      html += "</div>\n"
    }
    if !(marked && gapAfter) {
      for line in section.footer { html += "<div class=\"footer\">\(escape(line))</div>\n" }
    }
    return html + "</section>\n"
  }

  /// A cell's labels in UIKit's order for its style, then its accessory.
  private func cellHTML(_ cell: CellContent) -> String {
    let text = "<span class=\"text\">\(escape(cell.text))</span>"
    let detail = cell.detail.map { "<span class=\"detail\">\(escape($0))</span>" } ?? ""
    let labels: String
    switch cell.style {
    case .basic: labels = text
    case .subtitle: labels = "<span class=\"stack\">\(text)\(detail)</span>"
    case .value1: labels = text + detail
    case .value2: labels = text + detail
    }
    let accessory =
      cell.accessory == .none
      ? ""
      : "<span class=\"accessory \(cell.accessory.rawValue.replacingOccurrences(of: " ", with: "-"))\"></span>"
    return "<div class=\"content \(cell.style.rawValue)\">\(labels)</div>\(accessory)"
  }

  private func escape(_ text: String) -> String { escapeXML(text) }

  /// UIKit's metrics and system colours: 44-point rows, 17-point text, 16-point insets, the
  /// separator inset to the text, headers in 13-point small capitals.
  private var css: String {
    """
    body { margin: 0; font: 17px/22px \(HTMLOptions.fontFamilies);
      -webkit-font-smoothing: antialiased; }
    body.light { --bg: #ffffff; --grouped-bg: #f2f2f7; --cell: #ffffff; --label: #000000;
      --secondary: #8a8a8e; --separator: #c6c6c8; --tint: #007aff;
      --fill: #eeeeef; --selected: #ffffff; }
    body.dark { --bg: #000000; --grouped-bg: #000000; --cell: #1c1c1e; --label: #ffffff;
      --secondary: #8d8d93; --separator: #38383a; --tint: #0a84ff;
      --fill: #1c1c1f; --selected: #636366; }
    body { background: var(--bg); color: var(--label); }
    .screen { position: relative; margin: 0 auto; min-height: 100vh; background: var(--bg); }
    .table.grouped, .table.insetGrouped { background: var(--grouped-bg); padding-bottom: 16px; }
    .view-title { font-size: 34px; line-height: 41px; font-weight: 700; padding: 8px 16px; }
    .segments { display: flex; margin: 8px 16px; padding: 2px; border-radius: 9px; background: var(--fill);
      font-size: 13px; line-height: 28px; font-weight: 500; text-align: center; }
    .segments span { flex: 1; border-radius: 7px; }
    .segments .selected { background: var(--selected); font-weight: 600;
      box-shadow: 0 3px 8px rgba(0, 0, 0, 0.12); }
    .view-caption, .count { font-size: 13px; line-height: 18px; color: var(--secondary); padding: 8px 16px; }
    .header { font-size: 13px; line-height: 18px; color: var(--secondary); text-transform: uppercase;
      padding: 16px 16px 6px; }
    .table.plain .header { text-transform: none; font-weight: 600; font-size: 15px; color: var(--label);
      background: var(--grouped-bg); padding: 4px 16px; position: sticky; top: 0; z-index: 1; }
    .footer { font-size: 13px; line-height: 18px; color: var(--secondary); padding: 6px 16px 0; }
    .group { background: var(--cell); }
    /* A grouped section keeps its distance from the one before when it has no header, as UIKit. */
    .table.grouped section > .group:first-child, .table.insetGrouped section > .group:first-child {
      margin-top: 18px; }
    /* The section index takes its own strip: accessories and text end before it. */
    .table.has-index .content, .table.has-index .accessory { margin-right: 14px; }
    .table.insetGrouped .group { margin: 0 16px; border-radius: 10px; overflow: hidden; }
    .cell { display: flex; align-items: center; min-height: 44px; padding-left: 16px; }
    /* Drawn as a shadow, the separator takes no height: rows stay 44 points. */
    .cell + .cell .content, .cell + .cell .accessory { box-shadow: inset 0 0.5px var(--separator); }
    .content { flex: 1; display: flex; align-items: center; min-height: 44px; padding-right: 16px;
      box-sizing: border-box; min-width: 0; }
    .content .text { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    .content .detail { color: var(--secondary); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
    .content.subtitle .stack { display: flex; flex-direction: column; padding: 6px 0; min-width: 0; flex: 1; }
    .content.subtitle .stack span { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    .content.subtitle .detail { font-size: 12px; line-height: 16px; color: var(--label); }
    /* As UIKit: the text keeps its place, a long detail is cut. */
    .content.value1 .text { flex: 1 0 auto; max-width: 100%; min-width: 40%; }
    .content.value1 .detail { flex: 0 1 auto; min-width: 0; margin-left: 8px; text-align: right; }
    .content.value2 .text { flex: 0 0 30%; text-align: right; font-size: 12px; font-weight: 600;
      color: var(--tint); }
    .content.value2 .detail { flex: 1; margin-left: 6px; color: var(--label); font-size: 15px; }
    .accessory { align-self: stretch; display: flex; align-items: center; padding-right: 16px; }
    .accessory.disclosure::after { content: "›"; font-size: 24px; color: #c4c4c7; }
    .accessory.checkmark::after { content: "✓"; font-weight: 600; color: var(--tint); }
    .accessory.detail::after { content: "ⓘ"; font-size: 20px; color: var(--tint); }
    .accessory.detail-disclosure::after { content: "ⓘ  ›"; font-size: 20px; color: var(--tint); }
    .placeholder { display: flex; align-items: center; justify-content: center; min-height: 200px;
      color: var(--secondary); text-align: center; padding: 0 32px; }
    .grid { display: flex; flex-wrap: wrap; gap: 10px; padding: 10px 16px; }
    .card { width: var(--card-width); background: var(--cell); border-radius: 10px; padding: 8px;
      box-shadow: 0 0 0 0.5px var(--separator); display: flex; }
    .card .content { padding-right: 0; min-height: 0; }
    .card .content .text { white-space: pre; }
    .gap { color: var(--secondary); text-align: center; font-size: 13px; }
    .index { position: absolute; right: 2px; top: 50%; transform: translateY(-50%); display: flex;
      flex-direction: column; font-size: 11px; line-height: 13px; font-weight: 600; color: var(--tint); }
    """
  }
}
