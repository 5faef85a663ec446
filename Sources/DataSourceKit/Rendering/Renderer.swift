/// How `show` prints a view.
public enum RenderMode: String, Sendable, CaseIterable {
  /// Lines drawn with box characters (the default on a terminal).
  case box
  /// Aligned text without borders.
  case plain
  /// GitHub-flavoured Markdown.
  case markdown
  /// The items as CSV, with a header row.
  case csv
  /// One JSON array of sections: `[{"header": …, "footer": …, "items": […]}, …]`.
  case json
}

/// What a renderer needs to know besides the snapshot.
public struct RenderOptions: Sendable {
  public var mode: RenderMode
  /// Columns available for a line; box and plain output never exceeds it.
  public var width: Int
  public var color: Bool
  /// Draw the items as a table of their fields (a bare provider) rather than as cells.
  public var showsFields: Bool

  public init(mode: RenderMode = .box, width: Int = 80, color: Bool = false, showsFields: Bool = false) {
    self.mode = mode
    self.width = width
    self.color = color
    self.showsFields = showsFields
  }
}

/// Turns a view snapshot into text. Every mode is a view of the same sections.
public enum Renderer {
  /// - Complexity: O(rows shown × fields).
  public static func render(_ snapshot: ViewSnapshot<Value>, options: RenderOptions) -> String {
    var out = TextOutput(color: options.color)
    switch options.mode {
    case .json: renderJSON(snapshot, into: &out)
    case .csv: renderCSV(snapshot, into: &out)
    case .box, .plain, .markdown:
      if options.showsFields {
        RecordTableRenderer(snapshot: snapshot, options: options).render(into: &out)
      } else {
        CellListRenderer(snapshot: snapshot, options: options).render(into: &out)
      }
    }
    return out.text
  }

  // MARK: Data modes

  /// The header or footer lines of a section as JSON: a string, or null when there are none.
  private static func supplementaryJSON(_ lines: [String]) -> Value {
    lines.isEmpty ? .null : .string(lines.joined(separator: "\n"))
  }

  /// The header of a section for data modes: its header lines, else its key.
  static func sectionTitle(_ section: SectionSnapshot<Value>) -> String? {
    if !section.header.isEmpty { return section.header.joined(separator: " / ") }
    return section.key.map(\.description)
  }

  private static func renderJSON(_ snapshot: ViewSnapshot<Value>, into out: inout TextOutput) {
    var writer = JSONWriter()
    writer.writeRaw("[")
    for (i, section) in snapshot.sections.enumerated() {
      writer.writeRaw(i == 0 ? "\n  " : ",\n  ")
      writer.writeRaw("{\"header\": ")
      writer.write(section.header.isEmpty ? (section.key.map { .string($0.description) } ?? .null) : supplementaryJSON(section.header))
      writer.writeRaw(", \"footer\": ")
      writer.write(supplementaryJSON(section.footer))
      writer.writeRaw(", \"items\": [")
      for (j, row) in section.rows.enumerated() {
        writer.writeRaw(j == 0 ? "\n    " : ",\n    ")
        writer.write(row.item)
      }
      writer.writeRaw(section.rows.isEmpty ? "]}" : "\n  ]}")
    }
    writer.writeRaw(snapshot.sections.isEmpty ? "]" : "\n]")
    out.line(writer.text)
  }

  private static func renderCSV(_ snapshot: ViewSnapshot<Value>, into out: inout TextOutput) {
    let columns = TableColumns(snapshot: snapshot)
    let withSection = snapshot.sections.count > 1
    var header = withSection ? ["section"] : []
    header += columns.names
    out.line(header.map(csvField).joined(separator: ","))
    for section in snapshot.sections {
      let title = sectionTitle(section) ?? ""
      for row in section.rows {
        var fields = withSection ? [title] : []
        fields += columns.values(of: row.item).map { $0.isNull ? "" : $0.description }
        out.line(fields.map(csvField).joined(separator: ","))
      }
    }
  }

  static func csvField(_ text: String) -> String {
    guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
    return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }
}

/// The columns of a table of items: the known fields, else the fields of the records shown, and
/// a `value` column for items that are not records.
struct TableColumns {
  var names: [String]
  private var hasValueColumn: Bool

  init(snapshot: ViewSnapshot<Value>) {
    var names: [String] = snapshot.fields ?? []
    var seen = Set(names)
    var sawScalar = false
    for section in snapshot.sections {
      for row in section.rows {
        if case .record(let record) = row.item {
          if snapshot.fields == nil {
            for name in record.fieldNames where seen.insert(name).inserted { names.append(name) }
          }
        } else {
          sawScalar = true
        }
      }
    }
    hasValueColumn = sawScalar || names.isEmpty
    self.names = (hasValueColumn ? ["value"] : []) + names
  }

  /// The item's value for each column, in order.
  func values(of item: Value) -> [Value] {
    var result: [Value] = []
    result.reserveCapacity(names.count)
    if case .record(let record) = item {
      if hasValueColumn { result.append(.null) }
      for name in names.dropFirst(hasValueColumn ? 1 : 0) { result.append(record[name] ?? .null) }
    } else {
      result.append(item)
      result.append(contentsOf: repeatElement(.null, count: names.count - 1))
    }
    return result
  }
}

/// Accumulates output lines, with ANSI styles when colour is on.
struct TextOutput {
  var text = ""
  let color: Bool

  mutating func line(_ s: String) {
    text += s
    text += "\n"
  }

  func bold(_ s: String) -> String { color ? "\u{1B}[1m\(s)\u{1B}[0m" : s }
  func dim(_ s: String) -> String { color ? "\u{1B}[2m\(s)\u{1B}[0m" : s }
}
