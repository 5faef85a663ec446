/// Writes values as JSON, keeping the order of record fields.
public struct JSONWriter {
  public private(set) var text = ""

  public init() {}

  public mutating func write(_ value: Value) {
    switch value {
    case .null: text += "null"
    case .bool(let b): text += b ? "true" : "false"
    case .int(let i): text += String(i)
    case .double(let d): text += d.isFinite ? Value.format(double: d) : "null"
    case .string(let s): JSONWriter.appendQuoted(s, to: &text)
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

  public mutating func writeRaw(_ raw: String) { text += raw }

  public static func quoted(_ s: String) -> String {
    var out = ""
    appendQuoted(s, to: &out)
    return out
  }

  static func appendQuoted(_ s: String, to out: inout String) {
    out += "\""
    for scalar in s.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    out += "\""
  }
}
