/// A cell's layout, after UIKit's `UITableViewCell.CellStyle`.
public enum CellStyle: String, Sendable, CaseIterable {
  /// One line of text.
  case basic
  /// Text, with the detail on a second line below it.
  case subtitle
  /// Text on the left, the detail right-aligned (as in Settings).
  case value1
  /// The text as a narrow right-aligned label, then the detail left-aligned (as in Contacts:
  /// "mobile" then the number).
  case value2
}

/// What a cell shows at its trailing edge.
///
/// UIKit's `UITableViewCell.AccessoryType`: `.disclosureIndicator`, `.checkmark`,
/// `.detailButton` (the info button) and `.detailDisclosureButton` (info button and chevron).
public enum CellAccessory: String, Sendable, CaseIterable {
  /// Nothing.
  case none
  /// A chevron: the row leads somewhere.
  case disclosure
  /// A checkmark: the row is chosen.
  case checkmark
  /// An info button.
  case detail
  /// An info button and a chevron.
  case detailDisclosure = "detail disclosure"

  /// The glyph a text view draws for the accessory.
  package var glyph: String {
    switch self {
    case .none: ""
    case .disclosure: "›"
    case .checkmark: "✓"
    case .detail: "ⓘ"
    case .detailDisclosure: "ⓘ›"
    }
  }
}

/// What a cell shows: the values a presenter fills in.
public struct CellContent: Equatable, Sendable {
  /// The layout of the cell.
  public var style: CellStyle
  /// The main text.
  public var text: String
  /// The second text, below (subtitle) or beside (value1, value2) the main one.
  public var detail: String?
  /// What the cell shows at its trailing edge.
  public var accessory: CellAccessory

  /// Content of a style, with its texts and accessory.
  public init(style: CellStyle, text: String = "", detail: String? = nil, accessory: CellAccessory = .none) {
    self.style = style
    self.text = text
    self.detail = detail
    self.accessory = accessory
  }
}

/// A cell a view keeps for reuse, by its reuse identifier, cleared before it shows another item.
///
/// The requirements are what `UITableViewCell` and `UICollectionViewCell` already have (an
/// optional `reuseIdentifier`, `prepareForReuse()`), so a subclass of either conforms with no
/// code, and a main-actor class conforms (with an isolated conformance, which a view used on the
/// main actor accepts). A view makes the cells it has no spare of through a registration
/// (``ListView/register(_:forCellReuseIdentifier:)``), as a table view does: several cell
/// classes, subclasses of the view's `Cell`, in one list. ``TableCell`` (UIKit's four text
/// styles) is the shell's, and needs none (``ConstructibleCell``).
public protocol ReusableCell {
  /// The kind of cell; a view keeps a reuse pool per identifier, and does not keep a cell
  /// without one.
  var reuseIdentifier: String? { get }
  /// Clears what the last item left, before the cell shows another.
  mutating func prepareForReuse()
}

extension ReusableCell {
  /// Nothing to clear: a presenter sets every property it shows.
  public mutating func prepareForReuse() {}
}

/// A cell a view can make by itself for any reuse identifier, without a registration.
public protocol ConstructibleCell: ReusableCell {
  /// Makes an empty cell of a kind.
  init(reuseIdentifier: String)
}

/// A reusable cell with UIKit's text model (a style, a text, a detail, an accessory): the cell
/// the shell's presenters fill and its renderer draws.
public final class TableCell: ConstructibleCell {
  /// The kind of cell for an item.
  public let reuseIdentifier: String?
  /// What the cell shows.
  public var content: CellContent

  /// An empty cell of the kind `reuseIdentifier`.
  public init(reuseIdentifier: String) {
    self.reuseIdentifier = reuseIdentifier
    self.content = CellContent(style: .basic)
  }

  /// Clears the texts and the accessory; the style stays.
  public func prepareForReuse() {
    content = CellContent(style: content.style)
  }
}

/// Turns an item into a cell ("tell, don't ask": the presenter fills the cell it is handed).
///
/// `Cell` is any cell type the app defines; a data source joins a provider of `Item`s to a
/// presenter of them, and its views dequeue `Cell`s. The shell's presenters fill ``TableCell``s.
///
/// ```swift
/// struct MessagePresenter: CellPresenter {
///   func configure(_ cell: inout MessageCell, with message: Message, at itemPath: ItemPath) {
///     cell.subject = message.subject
///     cell.isUnread = message.isUnread
///   }
/// }
/// ```
public protocol CellPresenter<Item, Cell> {
  /// The items this presenter shows.
  associatedtype Item
  /// The cells it fills.
  associatedtype Cell

  /// The kind of cell this presenter fills for an item; views keep a reuse pool per identifier.
  func reuseIdentifier(for item: Item, at itemPath: ItemPath) -> String
  /// Fills `cell` for `item` (a cell of a class is filled in place, a cell of a struct is
  /// replaced).
  func configure(_ cell: inout Cell, with item: Item, at itemPath: ItemPath)
}

extension CellPresenter {
  /// One kind of cell, named after its type.
  public func reuseIdentifier(for item: Item, at itemPath: ItemPath) -> String { "\(Cell.self)" }
}

/// A presenter made of closures: one cell kind, a style, an accessory, and how to make the
/// text and detail of an item.
public final class ClosurePresenter<Item>: CellPresenter, CompositionNode {
  /// The cells this presenter fills: the shell's text cells.
  public typealias Cell = TableCell
  /// The reuse identifier of every cell it fills.
  public let identifier: String
  /// The style it gives every cell.
  public let style: CellStyle
  /// The accessory it gives every cell.
  public let accessory: CellAccessory
  private let text: (Item, ItemPath) -> String
  private let detail: ((Item, ItemPath) -> String)?
  private let label: String

  /// A presenter of one cell kind, whose text and detail are made by closures.
  ///
  /// - Parameters:
  ///   - style: the cell style, as UIKit's.
  ///   - accessory: the accessory every cell shows.
  ///   - text: the text of an item's cell.
  ///   - detail: the detail of an item's cell, or `nil` for none.
  ///   - reuseIdentifier: the kind of cell; defaults to the style's name.
  public convenience init(
    style: CellStyle, reuseIdentifier: String? = nil, accessory: CellAccessory = .none,
    text: @escaping (Item, ItemPath) -> String, detail: ((Item, ItemPath) -> String)? = nil
  ) {
    self.init(
      style: style, reuseIdentifier: reuseIdentifier, accessory: accessory, label: nil, text: text,
      detail: detail)
  }

  /// A presenter of one cell kind, named for `describe` by `label`.
  package init(
    style: CellStyle, reuseIdentifier: String? = nil, accessory: CellAccessory = .none, label: String? = nil,
    text: @escaping (Item, ItemPath) -> String, detail: ((Item, ItemPath) -> String)? = nil
  ) {
    self.style = style
    self.identifier = reuseIdentifier ?? style.rawValue
    self.accessory = accessory
    self.text = text
    self.detail = detail
    self.label = label ?? "cell \(style.rawValue)"
  }

  /// The kind of cell for an item.
  public func reuseIdentifier(for item: Item, at itemPath: ItemPath) -> String { identifier }

  /// Fills a cell for an item.
  public func configure(_ cell: inout TableCell, with item: Item, at itemPath: ItemPath) {
    cell.content.style = style
    cell.content.text = text(item, itemPath)
    cell.content.detail = detail?(item, itemPath)
    cell.content.accessory = accessory
  }

  /// How `describe` names this node.
  package var nodeTitle: String { label }
}

/// Registers several cell kinds and picks one per item: the first case whose test the item passes,
/// else the fallback.
///
/// Each kind keeps its own reuse identifier.
public final class DispatchPresenter<Item, Cell>: CellPresenter, CompositionNode {
  /// The tests in order, each with the presenter of the items that pass it.
  public let cases: [(test: (Item) -> Bool, presenter: any CellPresenter<Item, Cell>)]
  /// The presenter of the items that pass no test.
  public let fallback: any CellPresenter<Item, Cell>
  private let label: String

  /// A presenter that picks, for each item, the first case whose test it passes, else the fallback.
  ///
  /// - Parameters:
  ///   - cases: the presenters to pick from, each with the test that picks it.
  ///   - fallback: the presenter for an item no case picks.
  public convenience init(
    cases: [(test: (Item) -> Bool, presenter: any CellPresenter<Item, Cell>)],
    fallback: any CellPresenter<Item, Cell>
  ) {
    self.init(cases: cases, fallback: fallback, label: "cells")
  }

  /// A presenter that picks a case per item, named for `describe` by `label`.
  package init(
    cases: [(test: (Item) -> Bool, presenter: any CellPresenter<Item, Cell>)],
    fallback: any CellPresenter<Item, Cell>, label: String = "cells"
  ) {
    self.cases = cases
    self.fallback = fallback
    self.label = label
  }

  private func presenter(for item: Item) -> any CellPresenter<Item, Cell> {
    cases.first { $0.test(item) }?.presenter ?? fallback
  }

  /// The kind of cell for an item.
  public func reuseIdentifier(for item: Item, at itemPath: ItemPath) -> String {
    presenter(for: item).reuseIdentifier(for: item, at: itemPath)
  }

  /// Fills a cell for an item.
  public func configure(_ cell: inout Cell, with item: Item, at itemPath: ItemPath) {
    presenter(for: item).configure(&cell, with: item, at: itemPath)
  }

  /// How `describe` names this node.
  package var nodeTitle: String { label }
  /// The nodes below this one in `describe`.
  package var nodeChildren: [any CompositionNode] {
    (cases.map(\.presenter) + [fallback]).compactMap { $0 as? any CompositionNode }
  }
}

/// How a table view draws its sections, after UIKit's `UITableView.Style`.
public enum TableStyle: String, Sendable, CaseIterable {
  /// Rows edge to edge, section headers above them (the default).
  case plain
  /// Sections as groups on a grey background, headers in small capitals above each group.
  case grouped
  /// Grouped, with each group inset from the edges and its corners rounded (Settings).
  case insetGrouped
}
