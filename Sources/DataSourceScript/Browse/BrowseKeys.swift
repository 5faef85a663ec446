/// A key `browse` reads: a character typed, or a key the terminal sends as a sequence.
public enum BrowseKey: Hashable, Sendable {
  case character(Character)
  case down, up, left, right, pageDown, pageUp, home, end
  case enter, escape, backspace
  /// The mouse wheel, where the terminal reports it.
  case wheelDown, wheelUp
  /// ^C: stops a search or a reload, and is otherwise ignored.
  case interrupt

  /// How `help browse` and `?` write the key.
  public var label: String {
    switch self {
    case .character(" "): "space"
    case .character(let c): String(c)
    case .down: "↓"
    case .up: "↑"
    case .left: "←"
    case .right: "→"
    case .pageDown: "PgDn"
    case .pageUp: "PgUp"
    case .home: "Home"
    case .end: "End"
    case .enter: "Enter"
    case .escape: "Esc"
    case .backspace: "Backspace"
    case .wheelDown: "wheel down"
    case .wheelUp: "wheel up"
    case .interrupt: "^C"
    }
  }
}

/// What a key does in `browse`: the key map is this list, read by the screen, by `?` and by
/// `help browse`, so the keys a user is told are the keys that work.
public enum BrowseAction: String, CaseIterable, Sendable {
  case rowDown, rowUp, pageDown, pageUp, first, last, nextSection, previousSection
  case goToRow, search, nextMatch, previousMatch, scrollLeft, scrollRight, reload, keys, leave

  /// The keys that do it.
  public var keys: [BrowseKey] {
    switch self {
    case .rowDown: [.down, .character("j"), .wheelDown]
    case .rowUp: [.up, .character("k"), .wheelUp]
    case .pageDown: [.character(" "), .pageDown, .character("f")]
    case .pageUp: [.character("b"), .pageUp]
    case .first: [.character("g"), .home]
    case .last: [.character("G"), .end]
    case .nextSection: [.character("]")]
    case .previousSection: [.character("[")]
    case .goToRow: [.character(":")]
    case .search: [.character("/")]
    case .nextMatch: [.character("n")]
    case .previousMatch: [.character("N")]
    case .scrollLeft: [.left, .character("h")]
    case .scrollRight: [.right, .character("l")]
    case .reload: [.character("r")]
    case .keys: [.character("?")]
    case .leave: [.character("q"), .escape]
    }
  }

  /// What it does, in a few words.
  public var summary: String {
    switch self {
    case .rowDown: "one row down"
    case .rowUp: "one row up"
    case .pageDown: "one page down"
    case .pageUp: "one page up"
    case .first: "the first row"
    case .last: "the last row"
    case .nextSection: "the next section, its header at the top"
    case .previousSection: "the previous section (or the start of this one)"
    case .goToRow: ":N Enter goes to row N"
    case .search: "/TEXT Enter finds TEXT in the cells below (case matters only with a capital)"
    case .nextMatch: "the next match"
    case .previousMatch: "the previous match"
    case .scrollLeft: "a wide table's columns to the left (the first stays)"
    case .scrollRight: "a wide table's columns to the right"
    case .reload: "loads the sources again; the top row stays, changed rows are marked (up to 100,000)"
    case .keys: "these keys, and what the view has read"
    case .leave: "back to the prompt"
    }
  }

  /// The action of each key.
  static let byKey: [BrowseKey: BrowseAction] = {
    var map: [BrowseKey: BrowseAction] = [:]
    for action in allCases {
      for key in action.keys {
        precondition(map[key] == nil, "\(key.label) is bound twice")
        map[key] = action
      }
    }
    return map
  }()

  /// The key map as lines: keys, then what they do.
  static var helpLines: [String] {
    let keyTexts = allCases.map { $0.keys.map(\.label).joined(separator: " ") }
    let width = keyTexts.map(\.count).max() ?? 0
    return zip(keyTexts, allCases).map { keys, action in
      keys.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + action.summary
    }
  }
}
