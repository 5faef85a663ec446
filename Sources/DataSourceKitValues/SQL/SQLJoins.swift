// The keys of a `join` a database runs, and the statement that counts the keys the other side
// holds more than once: written once for every database.
//
// What each database does with them is its own: SQLite reads a page of the left's rows, then
// their matches by the least rowid of each key (its rows stay lazy, a page at a time);
// PostgreSQL joins the other side's first row of each key (`DISTINCT ON`). Both answer what the
// join in memory answers: keys compared as `==` compares them, null matching nothing, a key
// the other side holds more than once taken at its first row, with a note.
import DataSourceKit

/// The two keys of `join … on LEFT == RIGHT` as a database compares them.
package struct SQLJoinKeys {
  /// The left's key, over the left's columns, and the right's, over the right's.
  package var left: BoundSQL
  package var right: BoundSQL
  /// The keys' type (ints and doubles compare as numbers where the dialect compares them
  /// exactly: then the left's).
  package var type: ValueType
  /// What makes each key compare as dsh's `==` does, after it: text by its bytes (`COLLATE …`),
  /// or nothing.
  package var collation: BoundSQL

  /// The left key compared: the key in brackets, then ``collation``.
  package var comparedLeft: BoundSQL { "(\(left))\(collation)" }
  /// The right key compared.
  package var comparedRight: BoundSQL { "(\(right))\(collation)" }

  /// Whether either key carries values bound to the statement.
  package var bindsValues: Bool { !left.values.isEmpty || !right.values.isEmpty }

  /// How many keys the right's rows hold more than once among those the left's rows look up:
  /// one statement, its one column read as `count` writes it.
  ///
  /// - Parameters:
  ///   - leftKeys: the left's keys, over its rows as the view has them (its conditions, and a
  ///     limit with its order).
  ///   - rightFrom: the right's `FROM`.
  ///   - rightConditions: the right's own conditions.
  ///   - count: a count as the statement's column (a dialect's ``SQLGroupingDialect/resultColumn(_:)``).
  package func repeatedKeys(
    leftKeys: SQLSelect, rightFrom: BoundSQL, rightConditions: [BoundSQL], count: (BoundSQL) -> BoundSQL
  ) -> BoundSQL {
    var repeated = SQLSelect(list: "1", from: rightFrom)
    repeated.conditions =
      ["(\(right)) IS NOT NULL"] + rightConditions + ["\(comparedRight) IN (\(leftKeys.sql))"]
    repeated.groupBy = [comparedRight]
    return "SELECT \(count("count(*)")) FROM (\(repeated.sql) HAVING count(*) > 1) AS dsh_repeated"
  }
}

extension SQLTranslator {
  /// The keys of `join … on leftKey == rightKey`, `other` translating the right side's
  /// columns; `nil` when SQL cannot compare them exactly as `==` does.
  ///
  /// Both keys must be said in SQL and have one type whose equality SQL gives as dsh's (ints
  /// with doubles where the dialect compares numbers exactly); text compares by its bytes, and
  /// so does any type `comparedByBytes` names (SQLite keeps dates as text).
  package func joinKeys(
    _ leftKey: RowExpression, _ rightKey: RowExpression, other: SQLTranslator,
    comparedByBytes: Set<ValueType> = [.text]
  ) -> SQLJoinKeys? {
    guard let left = value(leftKey), let right = other.value(rightKey),
      left.type == right.type
        || (dialect.comparesNumbersExactly && left.type.isNumber && right.type.isNumber),
      Self.orderable.contains(left.type)
    else { return nil }
    // The collation apart: a key goes into several statements, as a column and compared.
    return SQLJoinKeys(
      left: left.sql, right: right.sql, type: left.type,
      collation: comparedByBytes.contains(left.type) ? " \(dialect.bytesCollation)" : "")
  }

  /// Why ``joinKeys(_:_:other:comparedByBytes:)`` gives no keys, in words for `explain`; `nil`
  /// when it gives them.
  package func joinKeysRefusal(_ leftKey: RowExpression, _ rightKey: RowExpression, other: SQLTranslator)
    -> String?
  {
    guard let left = value(leftKey) else { return "this side's key has no SQL that gives dsh's values" }
    guard let right = other.value(rightKey) else {
      return "the other side's key has no SQL that gives dsh's values"
    }
    guard
      left.type == right.type || (dialect.comparesNumbersExactly && left.type.isNumber && right.type.isNumber)
    else { return "the keys' types differ (\(left.type.rawValue) and \(right.type.rawValue))" }
    guard Self.orderable.contains(left.type) else {
      return "keys of type \(left.type.rawValue), which SQL compares otherwise than dsh"
    }
    return nil
  }
}
