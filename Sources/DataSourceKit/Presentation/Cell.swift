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
  case none, disclosure, checkmark, detail
  case detailDisclosure = "detail disclosure"

  /// The glyph a text view draws for the accessory.
  public var glyph: String {
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
  public var style: CellStyle
  public var text: String
  public var detail: String?
  public var accessory: CellAccessory

  public init(style: CellStyle, text: String = "", detail: String? = nil, accessory: CellAccessory = .none) {
    self.style = style
    self.text = text
    self.detail = detail
    self.accessory = accessory
  }
}

/// A reusable cell, as a view dequeues it: presenters fill it, views recycle it.
public final class TableCell {
  public let reuseIdentifier: String
  public var content: CellContent

  public init(reuseIdentifier: String) {
    self.reuseIdentifier = reuseIdentifier
    self.content = CellContent(style: .basic)
  }

  /// Clears what the last item left, before the cell shows another.
  public func prepareForReuse() {
    content = CellContent(style: content.style)
  }
}

/// Turns an item into a cell ("tell, don't ask": the presenter fills the cell it is handed).
public protocol CellPresenter<Item>: AnyObject {
  associatedtype Item

  /// The kind of cell this presenter fills; views keep a reuse pool per identifier.
  func reuseIdentifier(for item: Item, at itemPath: ItemPath) -> String
  /// Fills `cell` for `item`.
  func configure(_ cell: TableCell, with item: Item, at itemPath: ItemPath)
}

/// A presenter made of closures: one cell kind, a style, an accessory, and how to make the
/// text and detail of an item.
public final class ClosurePresenter<Item>: CellPresenter, CompositionNode {
  public let identifier: String
  public let style: CellStyle
  public let accessory: CellAccessory
  private let text: (Item, ItemPath) -> String
  private let detail: ((Item, ItemPath) -> String)?
  private let label: String

  /// - Parameters:
  ///   - reuseIdentifier: the kind of cell; defaults to the style's name.
  ///   - label: how `describe` names this presenter.
  public init(
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

  public func reuseIdentifier(for item: Item, at itemPath: ItemPath) -> String { identifier }

  public func configure(_ cell: TableCell, with item: Item, at itemPath: ItemPath) {
    cell.content.style = style
    cell.content.text = text(item, itemPath)
    cell.content.detail = detail?(item, itemPath)
    cell.content.accessory = accessory
  }

  public var nodeTitle: String { label }
}

/// Registers several cell kinds and picks one per item: the first case whose test the item passes,
/// else the fallback.
///
/// Each kind keeps its own reuse identifier.
public final class DispatchPresenter<Item>: CellPresenter, CompositionNode {
  public let cases: [(test: (Item) -> Bool, presenter: any CellPresenter<Item>)]
  public let fallback: any CellPresenter<Item>
  private let label: String

  public init(
    cases: [(test: (Item) -> Bool, presenter: any CellPresenter<Item>)], fallback: any CellPresenter<Item>,
    label: String = "cells"
  ) {
    self.cases = cases
    self.fallback = fallback
    self.label = label
  }

  private func presenter(for item: Item) -> any CellPresenter<Item> {
    cases.first { $0.test(item) }?.presenter ?? fallback
  }

  public func reuseIdentifier(for item: Item, at itemPath: ItemPath) -> String {
    presenter(for: item).reuseIdentifier(for: item, at: itemPath)
  }

  public func configure(_ cell: TableCell, with item: Item, at itemPath: ItemPath) {
    presenter(for: item).configure(cell, with: item, at: itemPath)
  }

  public var nodeTitle: String { label }
  public var nodeChildren: [any CompositionNode] {
    (cases.map(\.presenter) + [fallback]).compactMap { $0 as? any CompositionNode }
  }
}
