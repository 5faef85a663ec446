/// The width of text in terminal columns: wide East Asian characters and emoji take two,
/// combining marks none.
public enum TextWidth {
  /// - Complexity: O(n); ASCII text is measured without looking at grapheme clusters.
  public static func of(_ text: String) -> Int {
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
    return text.reduce(0) { $0 + of($1) }
  }

  public static func of(_ character: Character) -> Int {
    let scalars = character.unicodeScalars
    guard let first = scalars.first else { return 0 }
    if first.value < 0x20 || (0x7F..<0xA0).contains(first.value) { return 0 }
    if first.value < 0x300 && scalars.count == 1 { return 1 }
    let properties = first.properties
    switch properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format: return scalars.count == 1 ? 0 : 1
    default: break
    }
    // An emoji shown as a picture: by default, or asked for with VS16, or as part of a sequence.
    if properties.isEmojiPresentation { return 2 }
    if properties.isEmoji && scalars.contains(where: { $0.value == 0xFE0F || $0.value == 0x200D }) { return 2 }
    if isRegionalIndicatorPair(scalars) { return 2 }
    return isWide(first.value) ? 2 : 1
  }

  private static func isRegionalIndicatorPair(_ scalars: Character.UnicodeScalarView) -> Bool {
    scalars.count == 2 && scalars.allSatisfy { (0x1F1E6...0x1F1FF).contains($0.value) }
  }

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

  /// `text` cut to at most `width` columns, ending in `…` when something was cut.
  public static func truncate(_ text: String, to width: Int) -> String {
    guard width > 0 else { return "" }
    if text.utf8.count <= width, !text.utf8.contains(where: { $0 >= 0x80 || $0 < 0x20 }) { return text }
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
  public static func fit(_ text: String, to width: Int, alignment: Alignment = .left) -> String {
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

  public enum Alignment: Sendable {
    case left, right, center
  }
}
