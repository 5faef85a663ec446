import DataSourceKit

/// The closest candidate to a misspelled word, when one is close enough to be a likely fix.
public func suggestion(for word: String, among candidates: some Sequence<String>) -> String? {
  // A one-letter word is too short for a guess to mean anything; a two-letter one is taken for
  // a longer word missing one letter (`sx` for `sex`), its first the same.
  guard word.count >= 2 else { return nil }
  if word.count == 2 {
    return candidates.first { candidate in
      candidate.count == 3 && candidate.first?.lowercased() == word.first?.lowercased()
        && editDistance(word.lowercased(), candidate.lowercased()) == 1
    }
  }
  let limit = max(1, word.count / 3)
  var best: (String, Int)?
  for candidate in candidates where candidate != word {
    let d = editDistance(word.lowercased(), candidate.lowercased())
    if d <= limit, d < best?.1 ?? Int.max { best = (candidate, d) }
  }
  return best?.0
}

/// Levenshtein distance, with a transposition counting as one edit.
public func editDistance(_ a: String, _ b: String) -> Int {
  let a = Array(a)
  let b = Array(b)
  if a.isEmpty { return b.count }
  if b.isEmpty { return a.count }
  var previous2 = [Int](repeating: 0, count: b.count + 1)
  var previous = Array(0...b.count)
  var current = [Int](repeating: 0, count: b.count + 1)
  for i in 1...a.count {
    current[0] = i
    for j in 1...b.count {
      let cost = a[i - 1] == b[j - 1] ? 0 : 1
      current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
      if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
        current[j] = min(current[j], previous2[j - 2] + 1)
      }
    }
    (previous2, previous, current) = (previous, current, previous2)
  }
  return previous[b.count]
}
