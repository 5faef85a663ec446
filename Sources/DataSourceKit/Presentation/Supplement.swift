/// What a header, footer or placeholder of a section shows: its text, and a value of the app's
/// own type when the app made one.
///
/// A table view that draws its headers from the app's own model reads the value back typed, as
/// ``SectionKey`` is read back:
///
/// ```swift
/// let screen = inbox.header { section in
///   Supplement("\(section.count) messages", content: InboxHeader(unread: section.count))
/// }
/// let header = screen.supplements(.header, inSection: 0).first?.content(as: InboxHeader.self)
/// ```
///
/// The text is what a headless view lays out and what the shell prints; the content is what a
/// view of the app's compares: a header whose content changed is reloaded in the batch even when
/// its text did not. Supplements are `Sendable`, as the snapshots and batches that carry them.
public struct Supplement: Equatable, Sendable, CustomStringConvertible {
  /// The text shown for it.
  public let text: String
  private let content: (any Hashable & Sendable)?

  /// A supplement of text alone.
  public init(_ text: String) {
    self.text = text
    content = nil
  }

  /// A supplement carrying a value of the app's own type, with the text a headless view shows.
  public init(_ text: String, content: some Hashable & Sendable) {
    self.text = text
    self.content = content
  }

  /// The app's value, when it is of type `T`.
  public func content<T>(as type: T.Type) -> T? { content as? T }

  /// True for a supplement of no text and no content, which a decorator does not add (as a table
  /// view shows no header for an empty title).
  var isEmpty: Bool { text.isEmpty && content == nil }

  /// The text.
  public var description: String { text }

  /// Whether two supplements show the same text and carry equal content.
  public static func == (lhs: Supplement, rhs: Supplement) -> Bool {
    guard lhs.text == rhs.text else { return false }
    switch (lhs.content, rhs.content) {
    case (nil, nil): return true
    case (let a?, let b?): return AnyHashable(a) == AnyHashable(b)
    default: return false
    }
  }
}

/// What a header, footer or placeholder can be made from: a line of text, or a ``Supplement``
/// carrying a value of the app's own type.
public protocol SupplementConvertible {
  /// The supplement this stands for.
  var supplement: Supplement { get }
}

extension Supplement: SupplementConvertible {
  /// Itself.
  public var supplement: Supplement { self }
}

extension String: SupplementConvertible {
  /// A supplement of this text alone.
  public var supplement: Supplement { Supplement(self) }
}
