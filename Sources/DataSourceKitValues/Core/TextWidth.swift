import DataSourceKit

/// The width of text in terminal columns: wide East Asian characters and emoji take two,
/// combining marks none.
package enum TextWidth {
  /// - Complexity: O(n) in Unicode scalars: ASCII and Latin text never look at grapheme clusters.
  package static func of(_ text: String) -> Int {
    var asciiOnly = true
    var count = 0
    for byte in text.utf8 {
      if byte >= 0x80 {
        asciiOnly = false
        break
      }
      count += 1
    }
    if asciiOnly { return count }
    return ofScalars(text.unicodeScalars)
  }

  /// Width by scalar, as wcwidth does, plus the emoji rules terminals follow: a joiner (ZWJ)
  /// glues the next picture to the last, VS16 widens a text-style emoji, skin tones add nothing.
  static func ofScalars(_ scalars: String.UnicodeScalarView) -> Int {
    var width = 0
    var afterJoiner = false
    var lastWidth = 0
    var lastWasEmoji = false
    var openRegionalIndicator = false
    for scalar in scalars {
      let v = scalar.value
      if v < 0x300 {
        let w = v < 0x20 || (0x7F..<0xA0).contains(v) ? 0 : 1
        width += afterJoiner ? 0 : w
        (afterJoiner, lastWidth, lastWasEmoji) = (false, w, false)
        continue
      }
      if v == 0x200D {
        afterJoiner = true
        continue
      }
      if v == 0xFE0F {
        if lastWasEmoji && lastWidth == 1 {
          width += 1
          lastWidth = 2
        }
        continue
      }
      if (0x1F3FB...0x1F3FF).contains(v) && lastWasEmoji { continue }
      // Two regional indicators make one flag.
      if (0x1F1E6...0x1F1FF).contains(v) {
        if openRegionalIndicator {
          openRegionalIndicator = false
          continue
        }
        openRegionalIndicator = true
      } else {
        openRegionalIndicator = false
      }
      let properties = scalar.properties
      let w: Int
      switch properties.generalCategory {
      case .nonspacingMark, .enclosingMark, .format, .control: w = 0
      default: w = properties.isEmojiPresentation || isWide(v) ? 2 : 1
      }
      if !afterJoiner { width += w }
      afterJoiner = false
      lastWidth = w
      lastWasEmoji = properties.isEmoji
    }
    return width
  }

  /// The width of a value's text, without making the text for ints, nulls and booleans.
  package static func of(_ value: Value) -> Int {
    switch value {
    case .null: return 0
    case .bool(let b): return b ? 4 : 5
    case .int(let i):
      var n = i.magnitude
      var digits = 1
      while n >= 10 {
        n /= 10
        digits += 1
      }
      return digits + (i < 0 ? 1 : 0)
    case .string(let s): return of(s)
    default: return of(value.description)
    }
  }

  package static func of(_ character: Character) -> Int { ofScalars(String(character).unicodeScalars) }

  /// East Asian Wide and Fullwidth ranges (Unicode's EastAsianWidth.txt, W and F).
  private static func isWide(_ v: UInt32) -> Bool {
    switch v {
    case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0, 0x23F3,
      0x25FD...0x25FE, 0x2614...0x2615, 0x2648...0x2653, 0x267F, 0x2693, 0x26A1, 0x26AA...0x26AB,
      0x26BD...0x26BE, 0x26C4...0x26C5, 0x26CE, 0x26D4, 0x26EA, 0x26F2...0x26F3, 0x26F5, 0x26FA, 0x26FD,
      0x2705, 0x270A...0x270B, 0x2728, 0x274C, 0x274E, 0x2753...0x2755, 0x2757, 0x2795...0x2797, 0x27B0,
      0x27BF, 0x2B1B...0x2B1C, 0x2B50, 0x2B55, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
      0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF,
      0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4,
      0x17000...0x18CFF, 0x1B000...0x1B2FF, 0x1F004, 0x1F0CF, 0x1F18E, 0x1F191...0x1F19A,
      0x1F200...0x1F251, 0x1F300...0x1F64F, 0x1F680...0x1F6FF, 0x1F7E0...0x1F7EB, 0x1F90C...0x1F9FF,
      0x1FA70...0x1FAFF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
      return true
    default:
      return false
    }
  }

  /// Whether `text` holds a control character (a line end, a tab, an escape, …), which would
  /// break a table's frame if written as it is, or a bidirectional control, which would reorder
  /// what a terminal shows after it.
  /// - Complexity: one pass over the UTF-8 bytes.
  package static func hasControlCharacters(_ text: String) -> Bool {
    var previous: UInt8 = 0
    var beforePrevious: UInt8 = 0
    for byte in text.utf8 {
      // C0 and DEL are single bytes; C1 (U+0080–U+009F) is 0xC2 followed by 0x80–0x9F.
      if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && byte < 0xA0) { return true }
      // U+061C (D8 9C); U+200E–U+200F and U+202A–U+202E (E2 80 …); U+2066–U+2069 (E2 81 …).
      if previous == 0xD8 && byte == 0x9C { return true }
      if beforePrevious == 0xE2, previous == 0x80,
        byte == 0x8E || byte == 0x8F || (0xAA...0xAE).contains(byte)
      {
        return true
      }
      if beforePrevious == 0xE2, previous == 0x81, (0xA6...0xA9).contains(byte) { return true }
      beforePrevious = previous
      previous = byte
    }
    return false
  }

  /// Whether a scalar is a bidirectional control: it would reorder what a terminal shows.
  package static func isBidirectionalControl(_ v: UInt32) -> Bool {
    v == 0x061C || v == 0x200E || v == 0x200F || (0x202A...0x202E).contains(v)
      || (0x2066...0x2069).contains(v)
  }

  /// `text` as a cell shows it, control characters made visible.
  ///
  /// A line end shows as `↵`, a tab as `⇥`, any other control character as its Unicode control
  /// picture (`␛` for escape), a bidirectional control as `\u{202E}`, so one value stays on one
  /// line, in its order, and a terminal never obeys it (browse writes cells past the guard).
  /// Widths are measured on what is shown.
  ///
  /// - Parameter keepingMarks: keep the bidirectional marks (U+200E, U+200F, U+061C), which
  ///   only set the direction of the neutral characters beside them: a page, whose cells are
  ///   paragraphs of their own, shows right-to-left data as it was written with them.
  package static func displayable(_ text: String, keepingMarks: Bool = false) -> String {
    guard hasControlCharacters(text) else { return text }
    var shown = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      switch scalar.value {
      case 0x0A: shown.append("↵")
      case 0x09: shown.append("⇥")
      case 0x0D: shown.append("␍")
      case 0x00..<0x20: shown.append(Unicode.Scalar(0x2400 + scalar.value) ?? "?")
      case 0x7F: shown.append("␡")
      case 0x80..<0xA0:
        shown.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
      case let v where keepingMarks && (v == 0x061C || v == 0x200E || v == 0x200F): shown.append(scalar)
      case let v where isBidirectionalControl(v):
        shown.append(contentsOf: "\\u{\(String(v, radix: 16, uppercase: true))}".unicodeScalars)
      default: shown.append(scalar)
      }
    }
    return String(shown)
  }

  /// `text` with every character a terminal would obey, or that reorders what follows, written
  /// as `\u{…}`: C0 controls but the line end, DEL, C1 controls and bidirectional overrides.
  ///
  /// For messages, which quote file names, fields and values from data a user did not write.
  package static func escapedForTerminal(_ text: String) -> String {
    func isHidden(_ v: UInt32) -> Bool {
      (v < 0x20 && v != 0x0A) || (0x7F...0x9F).contains(v) || v == 0x061C || v == 0x200E || v == 0x200F
        || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
    }
    guard text.unicodeScalars.contains(where: { isHidden($0.value) }) else { return text }
    var shown = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      if isHidden(scalar.value) {
        shown.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
      } else {
        shown.append(scalar)
      }
    }
    return String(shown)
  }

  /// `text` cut to at most `width` columns, ending in `…` when something was cut; control
  /// characters are shown as ``displayable(_:)`` shows them.
  package static func truncate(_ text: String, to width: Int) -> String {
    guard width > 0 else { return "" }
    if text.utf8.count <= width, !text.utf8.contains(where: { $0 >= 0x80 || $0 < 0x20 || $0 == 0x7F }) {
      return text
    }
    let text = displayable(text)
    if of(text) <= width { return text }
    var result = ""
    var used = 0
    for character in text {
      let w = of(character)
      if used + w > width - 1 { break }
      result.append(character)
      used += w
    }
    return result + "…"
  }

  /// `text` cut or padded with spaces to exactly `width` columns.
  package static func fit(_ text: String, to width: Int, alignment: Alignment = .left) -> String {
    let cut = truncate(text, to: width)
    let padding = max(0, width - of(cut))
    switch alignment {
    case .left: return cut + String(repeating: " ", count: padding)
    case .right: return String(repeating: " ", count: padding) + cut
    case .center:
      let left = padding / 2
      return String(repeating: " ", count: left) + cut + String(repeating: " ", count: padding - left)
    }
  }

  package enum Alignment: Sendable {
    case left, right, center
  }
}
