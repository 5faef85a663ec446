import DataSourceKit
import Foundation

/// The shell's values key sections in their own order: numbers before text, null last.
extension Value: SelfOrderingKey {
  package static func compareKeys(_ lhs: Value, _ rhs: Value) -> ComparisonResult { compare(lhs, rhs) }
  package var isNullKey: Bool { isNull }
}

extension SectionKey {
  /// A shell value as a key.
  package init(value: Value) { self.init(selfOrdering: value) }

  /// The shell's value of the key, when the key is one.
  package var shellValue: Value? { selfOrderingBase as? Value }

  /// The key as a shell value: its value when it is one, else its description as text.
  package var asValue: Value { shellValue ?? .string(description) }

  /// The shell's null key.
  package static let null = SectionKey(value: .null)
}
