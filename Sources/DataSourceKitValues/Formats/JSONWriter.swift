import DataSourceKit

/// Writes values as JSON, keeping the order of record fields.
package struct JSONWriter {
  package private(set) var text = ""

  package init() {}

  package mutating func write(_ value: Value) {
    switch value {
    case .null: text += "null"
    case .bool(let b): text += b ? "true" : "false"
    case .int(let i): text += String(i)
    // JSON has no infinity or NaN; they are written as the strings JavaScript would print, so
    // the value is still there to see (null would claim it was missing).
    case .double(let d) where d.isNaN: text += "\"NaN\""
    case .double(let d) where d.isInfinite: text += d < 0 ? "\"-Infinity\"" : "\"Infinity\""
    case .double(let d): text += Value.format(double: d)
    case .string(let s): JSONWriter.appendQuoted(s, to: &text)
    // JSON has no dates: ISO 8601 text, as JavaScript's toJSON writes them.
    case .date, .timestamp: JSONWriter.appendQuoted(value.description, to: &text)
    case .list(let items):
      text += "["
      for (i, item) in items.enumerated() {
        if i > 0 { text += ", " }
        write(item)
      }
      text += "]"
    case .record(let record):
      text += "{"
      for (i, field) in record.fields.enumerated() {
        if i > 0 { text += ", " }
        JSONWriter.appendQuoted(field.name, to: &text)
        text += ": "
        write(field.value)
      }
      text += "}"
    }
  }

  package mutating func writeRaw(_ raw: String) { text += raw }

  package static func quoted(_ s: String) -> String {
    var out = ""
    appendQuoted(s, to: &out)
    return out
  }

  static func appendQuoted(_ s: String, to out: inout String) { QuotedLiteral.json.append(s, to: &out) }

}
