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
///
/// The keys that make another view of the rows (sort, filter, count) are VisiData's daily
/// keys on the column under the cursor, each the statement a user could type: the screen opens
/// that statement's view over the one shown, and `q` goes back to it.
public enum BrowseAction: String, CaseIterable, Sendable {
  case rowDown, rowUp, scrollDown, scrollUp, pageDown, pageUp, first, last, nextSection, previousSection
  case goToRow, search, nextMatch, previousMatch, columnLeft, columnRight, widen, narrow
  case sortAscending, sortDescending, frequency, keepValue, dropValue, openCounted
  case bind, reload, keys, back, leave

  /// The keys that do it.
  public var keys: [BrowseKey] {
    switch self {
    case .rowDown: [.down, .character("j")]
    case .rowUp: [.up, .character("k")]
    case .scrollDown: [.wheelDown]
    case .scrollUp: [.wheelUp]
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
    case .columnLeft: [.left, .character("h")]
    case .columnRight: [.right, .character("l")]
    case .widen: [.character("+")]
    case .narrow: [.character("-")]
    case .sortAscending: [.character("s")]
    case .sortDescending: [.character("S")]
    case .frequency: [.character("F")]
    case .keepValue: [.character("=")]
    case .dropValue: [.character("!")]
    case .openCounted: [.enter]
    case .bind: [.character("L")]
    case .reload: [.character("r")]
    case .keys: [.character("?")]
    case .back: [.character("q"), .escape]
    case .leave: [.character("Q")]
    }
  }

  /// What it does, in a few words.
  public var summary: String {
    switch self {
    case .rowDown: "the cursor one row down (a grid: the card below)"
    case .rowUp: "the cursor one row up (a grid: the card above)"
    case .scrollDown: "the rows one down, the cursor kept on the screen"
    case .scrollUp: "the rows one up"
    case .pageDown: "one page down"
    case .pageUp: "one page up"
    case .first: "the first row"
    case .last: "the last row"
    case .nextSection: "the next section, its header at the top"
    case .previousSection: "the previous section (or the start of this one)"
    case .goToRow: ":N Enter goes to row N"
    case .search: "/TEXT Enter finds TEXT below; a capital makes case matter"
    case .nextMatch: "the next match"
    case .previousMatch: "the previous match"
    case .columnLeft: "the cursor a column left (wide tables scroll; a grid: a card)"
    case .columnRight: "the cursor a column right (a grid: a card)"
    case .widen: "the cursor's column wider (columns never narrow as rows scroll)"
    case .narrow: "the cursor's column narrower (a number is never cut)"
    case .sortAscending: "sorted by the cursor's column: | sort by COLUMN"
    case .sortDescending: "sorted by it, largest first: | sort by COLUMN desc"
    case .frequency: "how often each value of the column comes, as a view of its own"
    case .keepValue: "rows with the cursor's value: | where COLUMN == VALUE"
    case .dropValue: "rows without it: | where COLUMN != VALUE"
    case .openCounted: "in a view made by F: the rows below with that value"
    case .bind: "LNAME Enter binds the view: let NAME = its statement"
    case .reload: "reloads the sources; changed rows marked (up to 100,000)"
    case .keys: "these keys, and what the view has read"
    case .back: "back to the view before (from the first, to the prompt)"
    case .leave: "back to the prompt from any view"
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
