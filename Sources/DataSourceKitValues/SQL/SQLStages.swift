// The stages a database runs, folded into one statement: written once for every database.
//
// A `where` becomes a condition, a `sort by` keys before the ones a statement has (a later sort
// is stable over an earlier one), a `section by` the first key (the section before it becomes a
// sort key), a `limit` from the first row a LIMIT; window functions a column each over the rows
// the conditions before them keep. Each database's query type holds the clauses and writes its
// FROM; what its SQL says differently (a term with its nulls last, a neighbour's arguments, the
// names its statements give their own columns) it answers through the hooks here and its
// `SQLDialect`.
import DataSourceKit

/// A sort or section key of a statement: its SQL (values bound), the dsh type of its values,
/// and a direction.
public struct SQLOrderTerm: Sendable, Equatable {
  /// The key's SQL.
  package var sql: BoundSQL
  /// The type of the key's values.
  public var type: ValueType
  /// The order of the keys.
  public var direction: SortDirection

  /// A key in SQL, in an order.
  package init(_ key: SQLValue, _ direction: SortDirection) {
    self.init(sql: key.sql, type: key.type, direction: direction)
  }

  /// A key's SQL, the type of its values, and an order.
  package init(sql: BoundSQL, type: ValueType, direction: SortDirection) {
    self.sql = sql
    self.type = type
    self.direction = direction
  }
}

/// A query whose stages a database runs: the clauses ``adding(_:translator:ordersTies:)`` folds
/// `where`, `sort by`, `section by` and `limit` into.
package protocol SQLStageFolding {
  /// What the rows are grouped by (`section by`), ordered first.
  var section: SQLOrderTerm? { get set }
  /// `sort by` keys, after the section's.
  var order: [SQLOrderTerm] { get set }
  /// The `limit`.
  var limit: Int? { get set }
  /// Whether the rows are a join's: a stage after one runs in memory, its match no column SQL
  /// knows.
  var isJoined: Bool { get }
  /// Adds a `where`'s condition, `sql` being `expression` in SQL.
  mutating func addCondition(_ sql: BoundSQL, of expression: RowExpression)
}

extension SQLStageFolding {
  /// The query with `stage` added, or `nil` when SQL cannot run it with the same meaning.
  ///
  /// - Parameter ordersTies: whether the rows have an order of their own that keeps equal keys
  ///   in place (a key, a rowid): without one, a sort or a section in SQL would leave ties in
  ///   any order, where the stages in memory keep them as they came.
  package func adding<Dialect>(
    _ stage: PushdownStage, translator: SQLTranslator<Dialect>, ordersTies: Bool = true
  ) -> Self? {
    if isJoined { return nil }
    // After a limit, another stage would change which rows the limit took.
    if limit != nil {
      guard case .slice(let slice) = stage, slice.offset == 0 else { return nil }
    }
    var query = self
    switch stage {
    case .filter(let expression):
      guard let condition = translator.condition(expression) else { return nil }
      query.addCondition(condition, of: expression)
    case .sort(let terms):
      guard ordersTies else { return nil }
      var keys: [SQLOrderTerm] = []
      for term in terms {
        guard let key = translator.key(term.expression) else { return nil }
        keys.append(SQLOrderTerm(key, term.direction))
      }
      // A later sort is stable over the earlier one: its keys come first.
      query.order = keys + query.order
    case .section(let term):
      guard ordersTies, let key = translator.key(term.expression) else { return nil }
      if let previous = query.section { query.order.insert(previous, at: 0) }
      query.section = SQLOrderTerm(key, term.direction)
    // Only a slice from the first row: the reads of pages and counts keep no offset of their
    // own, so `offset N` runs in memory over the rows SQL reads.
    case .slice(let slice):
      guard slice.offset == 0 else { return nil }
      guard let count = slice.count else { break }
      query.limit = min(query.limit ?? count, count)
    }
    return query
  }
}

// Window functions: the ranks, row numbers and neighbours' values SQL's window functions give
// are dsh's exactly (its window functions are defined as SQL's), given the same order: the keys
// (nulls last), then for a row number or a neighbour the view's own order among equal keys.
// Aggregates over a window stay in memory: a database adds doubles in its own order, and stops
// at an int overflow where dsh gives null.

/// One window column a database computes: `rank() OVER (…)` with its values, and what it holds.
package struct SQLWindowColumn: Sendable, Equatable {
  package var name: String
  package var sql: BoundSQL
  package var type: ValueType
  /// The column whose values it holds (`lag(x)` of a column): it is of that column's type.
  package var copies: String?

  package init(name: String, sql: BoundSQL, type: ValueType, copies: String? = nil) {
    self.name = name
    self.sql = sql
    self.type = type
    self.copies = copies
  }
}

extension SQLTranslator {
  /// The window columns of `fields` over a query's rows, or `nil` when one of them is not a
  /// window function the database computes as dsh does.
  ///
  /// - Parameters:
  ///   - section: the view's section key, the partition of `within section`.
  ///   - ties: the view's own order among equal keys (its section, its sort keys, the order its
  ///     rows have without a stage), which a row number and a neighbour follow.
  ///   - admits: whether a field may be a column of that name (not one the query's own SQL
  ///     takes, nor one already taken); called once for each field.
  ///   - term: an `ORDER BY` term with its nulls last, as the database writes one.
  ///   - neighbour: the arguments of `lag` or `lead` as the database takes them for a column of
  ///     `type`, and the column whose values it copies; `nil` when it cannot say them.
  package func windowColumns(
    _ fields: [WindowFieldDefinition], section: BoundSQL?, ties: [BoundSQL],
    admits: (String) -> Bool, term: (BoundSQL, SortDirection) -> BoundSQL,
    neighbour: (WindowCall, ValueType) -> (arguments: BoundSQL, copies: String?)?
  ) -> [SQLWindowColumn]? {
    var made: [SQLWindowColumn] = []
    for field in fields {
      guard field.calls.count == 1, let call = field.calls.first, case .function(let function) = call.kind,
        field.expression == nil, field.combine == nil, field.partitionCompute == nil,
        call.compute == nil, call.fallbackCompute == nil, !field.order.contains(where: { $0.compute != nil }),
        let type = field.type, type != .null, admits(field.name)
      else { return nil }
      var sql: BoundSQL
      var copies: String?
      switch function {
      // dsh's names are SQL's.
      case .rowNumber, .rank, .denseRank, .percentRank, .cumeDist: sql = "\(function.rawValue)()"
      case .lag, .lead:
        guard call.offset >= 0, let (arguments, copied) = neighbour(call, type) else { return nil }
        sql = "\(function.rawValue)(\(arguments))"
        copies = copied
      case .random:
        return nil
      }
      // The partition: the section, or `within EXPR`'s key (of a type that groups as dsh does).
      var over: [BoundSQL] = []
      if field.withinSection {
        if let section { over.append("PARTITION BY \(section)") }
      } else if let expression = field.partition {
        guard let key = self.key(expression), [.int, .text, .bool, .date].contains(key.type) else {
          return nil
        }
        over.append("PARTITION BY \(key.sql)")
      }
      var terms: [BoundSQL] = []
      for key in field.order {
        guard let value = self.key(key.expression) else { return nil }
        terms.append(term(value.sql, key.direction))
      }
      // A rank's peers are the rows with equal keys; a row number and a neighbour follow the
      // view's order among them.
      if [.rowNumber, .lag, .lead].contains(function) { terms += ties }
      if !terms.isEmpty { over.append("ORDER BY \(terms.joined(separator: ", "))") }
      made.append(
        SQLWindowColumn(
          name: field.name, sql: "\(sql) OVER (\(over.joined(separator: " ")))", type: type, copies: copies))
    }
    return made
  }

  /// A neighbour's default (`lag(x, 1, 0)`) in SQL.
  ///
  /// A value of the column's type, or null; `.some(nil)` for none; `nil` when the database
  /// cannot give it as dsh does.
  package func neighbourDefault(_ call: WindowCall, type: ValueType) -> SQLValue?? {
    guard let fallback = call.fallback else { return .some(nil) }
    guard let value = value(fallback), value.type == type || value.type == .null else { return nil }
    return .some(value)
  }
}
