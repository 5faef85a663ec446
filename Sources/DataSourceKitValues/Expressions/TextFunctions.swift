import DataSourceKit
import Foundation
import Synchronization

extension ExpressionFunction {
  /// How many times `find` occurs in `text`, not overlapping, left to right (as `replace`
  /// replaces them), found byte by byte in one pass (Knuth–Morris–Pratt: a naive search for a
  /// long `find` is quadratic, and Foundation's search made a 100 MB text take minutes).
  static func occurrences(of find: String, in text: String) -> Int {
    let pattern = Array(find.utf8)
    guard !pattern.isEmpty else { return 0 }
    // For each prefix of the pattern, the longest proper prefix that is also its suffix.
    var fallback = [Int](repeating: 0, count: pattern.count)
    var length = 0
    for i in 1..<max(pattern.count, 1) {
      while length > 0, pattern[i] != pattern[length] { length = fallback[length - 1] }
      if pattern[i] == pattern[length] { length += 1 }
      fallback[i] = length
    }
    var count = 0
    var matched = 0
    for byte in text.utf8 {
      while matched > 0, byte != pattern[matched] { matched = fallback[matched - 1] }
      if byte == pattern[matched] { matched += 1 }
      if matched == pattern.count {
        count += 1
        matched = 0  // Not overlapping: the next match starts after this one.
      }
    }
    return count
  }
}

extension ExpressionFunction {
  /// `text` as a value, or null with a note when it is longer than ``Value/maximumTextLength``.
  static func bounded(_ text: String, notes: ExpressionNotes?) -> Value {
    guard text.utf8.count <= Value.maximumTextLength else {
      notes?.add(.textTooLong)
      return .null
    }
    return .string(text)
  }

  /// Whether the text of `value` (its `description`) would be longer than `limit` bytes,
  /// worked out without writing it: an upper bound for each scalar, the lengths of texts.
  static func textLength(of value: Value, passes limit: Int) -> Bool {
    var total = 0
    func add(_ value: Value) -> Bool {
      switch value {
      // Quotes and escapes at most double a text, and add two.
      case .string(let s): total += 2 * s.utf8.count + 2
      case .list(let items):
        total += 2
        for item in items {
          guard !add(item) else { return true }
          total += 2
        }
      case .record(let record):
        total += 2
        for (name, item) in zip(record.schema.names, record.values) {
          total += 2 * name.utf8.count + 4
          guard !add(item) else { return true }
        }
      default: total += 40
      }
      return total > limit
    }
    return add(value)
  }
}

extension ExpressionFunction {
  /// Whether `text` matches the LIKE `pattern` whole: `%` any run of characters (none too), `_`
  /// one character, anything else itself, as SQL and DuckDB match.
  ///
  /// - Complexity: O(text × pattern) at worst; a pattern with one `%` is linear.
  static func like(_ text: [Unicode.Scalar], _ pattern: [Unicode.Scalar]) -> Bool {
    var t = 0
    var p = 0
    // Where the last `%` was, and the text position it is tried at next.
    var star: Int?
    var retry = 0
    while t < text.count {
      if p < pattern.count, pattern[p] == "%" {
        star = p
        p += 1
        retry = t
      } else if p < pattern.count, pattern[p] == "_" || pattern[p] == text[t] {
        p += 1
        t += 1
      } else if let star {
        p = star + 1
        retry += 1
        t = retry
      } else {
        return false
      }
    }
    while p < pattern.count, pattern[p] == "%" { p += 1 }
    return p == pattern.count
  }
}

/// Regular expressions by their text, compiled once each: `matches` runs once per row.
package final class PatternCache: Sendable {
  package static let shared = PatternCache()

  /// How long one match may take: ICU's backtracking is exponential in the worst case, and a
  /// match does not return to the row loop that hears ^C.
  static let matchLimit: Duration = .seconds(2)
  static let matchLimitText = "2 s"

  /// What a bounded match found.
  package enum Match {
    case found(Bool)
    /// The statement was interrupted (^C) while it ran.
    case stopped
    /// It ran past ``matchLimit``.
    case tooSlow
  }

  /// Whether `regex` finds a match in `text`, stopped by ^C (the task's cancellation, or the
  /// statement's ``ReadInterruption``) and after ``matchLimit``: ICU reports its progress
  /// every few thousand steps, and the match ends when the block says stop.
  package static func firstMatch(_ regex: NSRegularExpression, in text: String) -> Match {
    let range = NSRange(text.startIndex..<text.endIndex, in: text)
    let interruption = ReadInterruption.current
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: matchLimit)
    var outcome = Match.found(false)
    regex.enumerateMatches(in: text, options: [.reportProgress], range: range) { result, _, stop in
      if result != nil {
        outcome = .found(true)
        stop.pointee = true
      } else if Task.isCancelled || interruption?.isInterrupted == true {
        outcome = .stopped
        stop.pointee = true
      } else if clock.now > deadline {
        outcome = .tooSlow
        stop.pointee = true
      }
    }
    return outcome
  }
  /// By the pattern's scalars: Swift's `String` keys compare canonically, so `é` and `e` with a
  /// combining accent (which a regular expression tells apart) would share an entry.
  private let compiled = Mutex<[[Unicode.Scalar]: NSRegularExpression?]>([:])

  /// The expression `pattern` writes, or `nil` when it is not one.
  package func regex(_ pattern: String) -> NSRegularExpression? {
    let key = Array(pattern.unicodeScalars)
    if let known = compiled.withLock({ $0[key] }) { return known }
    let made = try? NSRegularExpression(pattern: pattern)
    compiled.withLock { cache in
      if cache.count > 256 { cache.removeAll() }
      cache[key] = made
    }
    return made
  }
}

/// A snake_case name of the language (`quantile_cont`) as the Swift case that stands for it
/// (`quantileCont`).
func swiftName(ofSnakeCase name: String) -> String {
  let words = name.split(separator: "_")
  return words.enumerated().map { $0 == 0 ? String($1) : $1.prefix(1).uppercased() + $1.dropFirst() }.joined()
}
