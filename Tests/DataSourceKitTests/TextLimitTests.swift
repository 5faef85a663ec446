import Foundation
import Testing

@testable import DataSourceKit
@testable import DataSourceKitValues

/// The bound on texts expressions make (``Value/maximumTextLength``), and the search `replace`
/// counts its matches with before it grows a text.
@Suite("Text length limit")
struct TextLimitTests {
  @Test(
    "matches are counted as replace replaces them: left to right, not overlapping, by bytes",
    arguments: [
      ("aa", "aaa", 1), ("aa", "aaaa", 2), ("ab", "abab", 2), ("aab", "aaab", 1), ("abcabd", "abcabcabd", 1),
      ("é", "éeé", 2), ("\u{0}", "x\u{0}y\u{0}", 2), ("long", "lo", 0), ("x", "", 0), ("😀", "a😀😀b", 2),
    ])
  func occurrences(find: String, text: String, expected: Int) {
    #expect(ExpressionFunction.occurrences(of: find, in: text) == expected)
    // The same as Foundation's replace does it: each match grows the text by one byte here.
    let grown = text.replacingOccurrences(of: find, with: find + "+", options: .literal)
    #expect(grown.utf8.count - text.utf8.count == expected)
  }

  @Test("replace, case mapping and text() of a list past the bound give null with the note")
  func bounds() {
    let notes = ExpressionNotes()
    let half = String(repeating: "a", count: Value.maximumTextLength / 2 + 1)
    let replaced = ExpressionFunction.replace.apply(
      [.string(half), .string("a"), .string("aa")], notes: notes)
    #expect(replaced == .null)
    let fits = ExpressionFunction.replace.apply([.string("abc"), .string("b"), .string("xyz")], notes: notes)
    #expect(fits == .string("axyzc"))
    let list = Value.list(Array(repeating: .string(half), count: 3))
    #expect(ExpressionFunction.text.apply([list], notes: notes) == .null)
    #expect(ExpressionFunction.text.apply([.list([.int(1), .string("a")])], notes: notes) != .null)
    #expect(Arithmetic.apply(.add, .string(half), .string(half), notes: notes) == .null)
    let taken = notes.take()
    #expect(taken.count == 1 && taken.first?.note == .textTooLong && taken.first?.count == 3, "\(taken)")
  }
}
