import Foundation

/// An error the engine reports to its callers: what went wrong, and where.
///
/// The cases carry structured data; ``description`` is the one place their wording lives. A
/// source that cannot be read (a file, a database, the web) reports its own error inside
/// ``read(_:)``.
public enum DataSourceError: Error, Equatable, Sendable, CustomStringConvertible {
  /// A provider asked for items before it was loaded.
  case notLoaded
  /// More items than a stage may arrange.
  case tooManyToArrange(count: Int, limit: Int, stage: String)
  /// The load was cancelled: its task was (`Task.cancel()`, or an interrupt the caller turns into one).
  case cancelled
  /// The provider a stage reads from failed while it was read (a value its type does not
  /// hold); `message` is that provider's error.
  case sourceFailed(message: String)
  /// A source could not be read: a file, a database or a server said no, in the words of the
  /// module that reads it.
  case read(any ReadFailure)

  /// A description for people.
  public var description: String {
    switch self {
    case .notLoaded: "the provider is not loaded"
    case .tooManyToArrange(let count, let limit, let stage):
      "'\(stage)' would arrange \(count) items; stages keep an index per item and take at most \(limit); put '| limit N' before it"
    case .cancelled: "interrupted; the provider is as it was"
    case .sourceFailed(let message): message
    case .read(let failure): failure.description
    }
  }

  /// Whether two errors are the same: read failures of one type compare as that type does.
  public static func == (lhs: DataSourceError, rhs: DataSourceError) -> Bool {
    switch (lhs, rhs) {
    case (.notLoaded, .notLoaded), (.cancelled, .cancelled): true
    case (.tooManyToArrange(let a, let b, let c), .tooManyToArrange(let x, let y, let z)):
      a == x && b == y && c == z
    case (.sourceFailed(let a), .sourceFailed(let b)): a == b
    case (.read(let a), .read(let b)): a.isSame(as: b)
    default: false
    }
  }
}

/// What a module of sources (files, databases, the web) reports when it cannot read, inside
/// ``DataSourceError/read(_:)``: worded for people, and comparable.
public protocol ReadFailure: Error, Equatable, Sendable, CustomStringConvertible {}

extension ReadFailure {
  /// Whether `other` is this failure.
  fileprivate func isSame(as other: any ReadFailure) -> Bool {
    guard let other = other as? Self else { return false }
    return self == other
  }
}
