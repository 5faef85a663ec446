import DataSourceKit
import DataSourceKitValues
import Foundation
import GRDB

// Stages run inside SQLite where SQL says exactly what dsh means: a `where` becomes a WHERE
// condition, `sort by` and `section by` an ORDER BY (nulls last), `limit` a LIMIT. Every column
// was checked at load to hold values of one type (see SQLiteColumnTypes.swift), so SQLite's
// comparisons are dsh's: numbers by value (ints and reals exactly), text by code points (the
// BINARY collation), dates as ISO text, booleans as 0 and 1.
//
// What SQL cannot say the same way runs in memory: nested fields, timestamps, int arithmetic
// (SQLite turns an overflow into a real where dsh gives null), conversions and the functions
// whose SQL versions differ (lower and upper fold ASCII only; round rounds its own way).

extension SQLiteProvider: QueryPushdown {
  package func pushingDown(_ stage: PushdownStage) -> (any DataProvider<Value>)? {
    query.adding(stage, translator: query.translator).map { with($0) }
  }

  package func reasonInMemory(_ condition: RowExpression) -> String? {
    query.translator.reasonInMemory(condition)
  }
}

extension SQLiteProvider {
  package func pushingDownFields(
    _ fields: [ComputedFieldsProvider.Field], label: String, notes: ExpressionNotes?
  )
    -> (any DataProvider<Value>)?
  {
    query.addingFields(fields, label: label).map(with)
  }

  package func pushingDownWindows(
    _ fields: [WindowFieldDefinition], label: String, notes: ExpressionNotes?
  )
    -> (any DataProvider<Value>)?
  {
    guard let windowed = query.addingWindows(fields, label: label) else { return nil }
    for field in fields where field.withinSection && query.section == nil {
      notes?.add(.withinSectionWithoutSections(field: field.name))
    }
    return with(windowed)
  }
}

extension SQLiteProvider: ReadOnlyStore {
  /// How refusals of edits name this store.
  public var storeDescription: String { "a sqlite provider" }
}

extension SQLiteQuery: SQLStageFolding {
  /// A join's rows: no stage after it runs in SQL.
  package var isJoined: Bool { join != nil }

  /// Adds a `where`'s condition, with the range of the integer key it keeps, if any.
  package mutating func addCondition(_ sql: BoundSQL, of expression: RowExpression) {
    conditions.append(
      Condition(sql, keyBounds: keyColumn.flatMap { Self.keyBounds(of: expression, key: $0) }))
  }
}

// Window functions SQLite computes as dsh does (`SQLTranslator.windowColumns`), written to a
// table of the connection when the view is first counted (see `materializeWindows`).

extension SQLiteQuery {
  /// Whether this SQLite computes window functions (3.25 on).
  private static let readsWindows: Bool = {
    guard let memory = try? DatabaseQueue() else { return false }
    return (try? memory.read { try $0.makeStatement(sql: "SELECT rank() OVER (ORDER BY 1)") }) != nil
  }()

  /// Whether columns may be computed over the rows as they stand: never over a limit's, a
  /// join's or other windows', and not beside a column named as the windows' own are.
  private var takesComputedColumns: Bool {
    Self.readsWindows && windows == nil && join == nil && limit == nil && rowOrder != nil && !columns.isEmpty
      && !columns.contains(where: { $0.name.lowercased().hasPrefix("_dsh_") })
  }

  /// The query with `fields` computed over its rows in the subquery window functions use (an
  /// `extend` whose every value SQL says as dsh does: double arithmetic, the functions the
  /// dialect answers for), or `nil`.
  func addingFields(_ fields: [ComputedFieldsProvider.Field], label: String) -> SQLiteQuery? {
    guard takesComputedColumns else { return nil }
    let translator = self.translator
    var taken = Set(columns.map { $0.name.lowercased() })
    var made: [Windows.Column] = []
    for field in fields {
      guard let type = field.type, [.int, .double, .text, .bool].contains(type),
        !field.name.lowercased().hasPrefix("_dsh_"),
        !["rowid", "_rowid_", "oid"].contains(field.name.lowercased()),
        taken.insert(field.name.lowercased()).inserted,
        let value = translator.value(field.expression), value.type == type
      else { return nil }
      // A real stays a real when both operands were stored as integers.
      let sql: BoundSQL = type == .double ? "CAST((\(value.sql)) AS REAL)" : "(\(value.sql))"
      made.append(Windows.Column(name: field.name, sql: sql, type: type, copies: nil))
    }
    var query = self
    query.windows = Windows(
      conditions: conditions, columns: made, label: label, section: section, orderCount: order.count)
    query.conditions = []
    return query
  }

  /// The query with window columns computed over its rows, or `nil` when one of them is not a
  /// window function SQL computes as dsh does (`lag` and `lead` of a column alone).
  func addingWindows(_ fields: [WindowFieldDefinition], label: String) -> SQLiteQuery? {
    guard takesComputedColumns else { return nil }
    let translator = self.translator
    // SQLite's names are the same in any case.
    var taken = Set(columns.map { $0.name.lowercased() })
    // The view's own order among equal keys: its section, its sort keys, the stored order.
    let ties =
      ((section.map { [$0] } ?? []) + order).map { Self.nullsLast($0.sql, $0.direction) }
      + [BoundSQL(stringLiteral: sourceRowOrder)]
    let made = translator.windowColumns(
      fields, section: section?.sql, ties: ties,
      admits: { name in
        // The names the query's SQL gives its own columns, and those the table it writes the
        // rows to reads its rowid by.
        !name.hasPrefix("_dsh_") && !["rowid", "_rowid_", "oid"].contains(name.lowercased())
          && taken.insert(name.lowercased()).inserted
      },
      term: Self.nullsLast,
      neighbour: { call, type in
        // A column: the neighbour's value is read as its type (every value is checked before
        // the windows are computed; see `materializeWindows`).
        guard case .field(let path) = call.argument, path.count == 1,
          let column = columns.first(where: { $0.name == path[0] }), column.type == type,
          let fallback = translator.neighbourDefault(call, type: type)
        else { return nil }
        let list: [BoundSQL] =
          [BoundSQL(stringLiteral: Self.quoted(column.name)), "\(call.offset)"]
          + (fallback.map { [$0.sql] } ?? [])
        return (list.joined(separator: ", "), column.name)
      })
    guard let made else { return nil }
    var query = self
    query.windows = Windows(
      conditions: conditions, columns: made, label: label, section: section, orderCount: order.count)
    query.conditions = []
    return query
  }
}

extension SQLiteQuery {
  /// The keys a condition keeps when it keeps exactly the rows whose `key` (never null: it is
  /// the rowid) lies in one range: comparisons of the key with an int, joined by `and`.
  static func keyBounds(of expression: RowExpression, key: String) -> ClosedRange<Int>? {
    switch expression {
    case .binary(let a, .and, let b):
      guard let x = keyBounds(of: a, key: key), let y = keyBounds(of: b, key: key) else { return nil }
      let low = max(x.lowerBound, y.lowerBound)
      let high = min(x.upperBound, y.upperBound)
      // Ranges that do not meet (no row): left to SQL, which counts none.
      return low <= high ? low...high : nil
    case .binary(.field([key]), let op, .literal(.int(let value))):
      return bounds(op, value)
    case .binary(.literal(.int(let value)), let op, .field([key])):
      let flipped: [BinaryOperator: BinaryOperator] = [
        .less: .greater, .lessOrEqual: .greaterOrEqual, .greater: .less, .greaterOrEqual: .lessOrEqual,
        .equal: .equal,
      ]
      return flipped[op].flatMap { bounds($0, value) }
    default:
      return nil
    }
  }

  private static func bounds(_ op: BinaryOperator, _ value: Int) -> ClosedRange<Int>? {
    switch op {
    case .less: value == Int.min ? nil : Int.min...(value - 1)
    case .lessOrEqual: Int.min...value
    case .greater: value == Int.max ? nil : (value + 1)...Int.max
    case .greaterOrEqual: value...Int.max
    case .equal: value...value
    default: nil
    }
  }
}

extension SQLiteProvider {
  /// How SQLite computes `function`, as its dialect declares.
  package static func answer(for function: ExpressionFunction) -> FunctionAnswer {
    SQLiteDialect(columns: [:]).answer(for: function)
  }
  /// How SQLite computes `aggregate`, as its dialect declares (`help group` lists those it never
  /// computes).
  package static func answer(for aggregate: AggregateFunction) -> AggregateAnswer {
    SQLiteDialect(columns: [:]).answer(for: aggregate)
  }
}

/// How SQLite says what dsh means (see `SQLTranslator`): booleans are 1 and 0, text compares
/// by code points under `COLLATE BINARY` (a column declared `COLLATE NOCASE` would compare
/// otherwise), ints and reals compare exactly, and real arithmetic is the same IEEE operations.
struct SQLiteDialect: SQLGroupingDialect {
  /// The type of each column, as checked at load.
  let columns: [String: ValueType]

  func answer(for function: ExpressionFunction) -> FunctionAnswer {
    switch function {
    case .replace: .replace
    case .coalesce: .coalesce
    case .if: .condition
    // A text holding a NUL is measured and cut by dsh (`call`).
    case .len, .substr: .dialect
    case .like, .startsWith, .endsWith: .pattern
    case .lower, .upper: .inMemory(because: "SQLite's lower and upper change ASCII letters only")
    case .ilike: .inMemory(because: "SQLite folds the case of ASCII letters only")
    case .trim: .inMemory(because: FunctionAnswer.trimsSpacesOnly)
    case .round: .inMemory(because: "SQLite's round gives a real where dsh's keeps an int")
    case .abs: .inMemory(because: "SQLite's abs of the least int stops the statement, where dsh's is null")
    case .floor, .ceil: .inMemory(because: "SQLite has them only when built with its math functions")
    case .int, .double:
      .inMemory(
        because: "SQLite's CAST reads a text that is no number as 0, where dsh's gives null with a note")
    case .text: .inMemory(because: "SQLite writes a real's digits otherwise")
    case .year, .month, .day, .weekday, .hour, .date, .timestamp, .days:
      .inMemory(because: "SQLite's date functions read other spellings than dsh's dates")
    case .strftime: .inMemory(because: "SQLite's strftime reads dates as text and knows fewer codes")
    case .matches: .inMemory(because: "SQLite has no regular expressions")
    case .split: .inMemory(because: "SQLite has no lists")
    }
  }

  func answer(for aggregate: AggregateFunction) -> AggregateAnswer {
    switch aggregate {
    case .count: .count
    case .distinct: .countDistinct
    // Ints are added by their halves (`SUM(x >> 32)`, `SUM(x & 4294967295)`): exact, where
    // SQLite's own SUM stops on an overflow.
    case .sum: .exactIntSum
    case .avg: .exactIntAverage
    case .min: .least
    case .max: .greatest
    case .median, .quantile, .quantileCont: .inMemory(because: "SQLite has no quantiles")
    case .first, .last, .list: .inMemory(because: AggregateAnswer.needsOrder)
    }
  }

  /// Columns are read back as SQLite stores them.
  func resultColumn(_ sql: BoundSQL) -> BoundSQL { sql }

  /// The sums of the high and low 32 bits of each value (`x >> 32`, `x & 4294967295`): neither
  /// can overflow, where SQLite's own SUM stops with an error.
  func exactIntSum(_ x: BoundSQL) -> [BoundSQL] { ["sum((\(x)) >> 32)", "sum((\(x)) & 4294967295)"] }

  /// `min` and `max` order every type dsh's keys have as dsh does (a bool as 0 and 1).
  func extreme(least: Bool, of x: BoundSQL, type: ValueType) -> BoundSQL? {
    "\(least ? "min" : "max")(\(x))"
  }

  func column(_ name: String) -> SQLValue? {
    guard let type = columns[name], type != .timestamp, type != .list, type != .record else { return nil }
    return SQLValue("\(SQLiteQuery.quoted(name))", type)
  }

  func literal(_ value: Value) -> SQLValue? {
    switch value {
    case .null: SQLValue("NULL", .null, isLiteral: true)
    case .bool(let b): SQLValue(b ? "1" : "0", .bool, isLiteral: true)
    case .int, .double, .string: SQLValue("\(bound: value)", value.type, isLiteral: true)
    case .date: SQLValue("\(bound: .string(value.description))", .date, isLiteral: true)
    case .timestamp, .list, .record: nil
    }
  }

  var trueSQL: BoundSQL { "1" }
  var falseSQL: BoundSQL { "0" }
  func isTrue(_ bool: BoundSQL) -> BoundSQL { "\(bool) = 1" }
  var bytesCollation: BoundSQL { "COLLATE BINARY" }
  func contains(_ text: BoundSQL, _ part: BoundSQL) -> BoundSQL { "instr(\(text), \(part)) > 0" }
  var comparesNumbersExactly: Bool { true }

  func arithmetic(_ x: SQLValue, _ op: BinaryOperator, _ y: SQLValue) -> SQLValue? {
    // SQLite gives null for a division by zero as dsh does, but silently: dsh notes it, so
    // both stay in memory where the note is counted. Int arithmetic that overflows becomes a
    // real in SQLite and null in dsh: only real arithmetic (the same IEEE operations) goes down.
    guard op != .divide, op != .remainder, x.type == .double || y.type == .double else { return nil }
    return SQLValue("(\(x.sql) \(op.rawValue) \(y.sql))", .double)
  }

  func call(_ function: ExpressionFunction, _ arguments: [RowExpression], _ values: [SQLValue]) -> SQLValue? {
    let list = values.map(\.sql).joined(separator: ", ")
    switch function {
    // SQLite's length and substr read a text up to a NUL inside it: such a text is dsh's to
    // measure and cut (see `SQLiteProvider.registerFunctions`).
    case .len where values[0].type == .text:
      let text = values[0].sql
      return SQLValue(
        "(CASE WHEN \(Self.holdsNul(text)) THEN dsh_apply('len', CAST(\(text) AS BLOB)) ELSE length(\(list)) END)",
        .int)
    case .substr where values[0].type == .text:
      // SQLite's substr agrees for a start from 1 and a count from 0.
      guard case .literal(.int(let start)) = arguments[1], start >= 1,
        case .literal(.int(let count)) = arguments[2], count >= 0
      else { return nil }
      let text = values[0].sql
      return SQLValue(
        "(CASE WHEN \(Self.holdsNul(text)) THEN CAST(dsh_apply('substr', CAST(\(text) AS BLOB), \(String(start)), \(String(count))) AS TEXT) ELSE substr(\(list)) END)",
        .text)
    default:
      return nil
    }
  }

  /// The pattern test as `GLOB`.
  ///
  /// GLOB matches by characters and with case as dsh does (SQLite's `LIKE` ignores ASCII
  /// case): `%` becomes `*`, `_` becomes `?`, and GLOB's own wildcards in the text are
  /// written as one-character sets (`[*]`).
  ///
  /// GLOB reads a text only up to a NUL inside it (`"abc\0xyz"` would match `abc` and miss
  /// `%xyz`), so a text holding a NUL is matched by dsh's own matcher, registered on the
  /// connection as `dsh_apply` (see ``SQLiteProvider/registerFunctions(_:)``). The fixed
  /// start of a pattern is written as a range of the column by bytes, which an index on it
  /// serves (as SQLite would for the GLOB alone, and which holds for a text with a NUL too);
  /// a pattern that is its fixed start and `%` (`starts with`) is the range alone.
  func pattern(_ function: ExpressionFunction, _ text: SQLValue, _ pattern: String) -> BoundSQL? {
    // SQLite reads a pattern up to its first NUL. A U+FFFD in it may stand for bytes that are
    // not UTF-8 (dsh reads each such run as one), which no range or GLOB of the bytes finds.
    guard !pattern.unicodeScalars.contains("\0"), !pattern.unicodeScalars.contains("\u{FFFD}") else {
      return nil
    }
    func literal(_ text: String) -> String {
      var glob = ""
      for scalar in text.unicodeScalars {
        if scalar == "*" || scalar == "?" || scalar == "[" {
          glob += "[\(scalar)]"
        } else {
          glob.unicodeScalars.append(scalar)
        }
      }
      return glob
    }
    let glob: String
    switch function {
    case .like:
      glob = pattern.unicodeScalars.map { scalar in
        scalar == "%" ? "*" : scalar == "_" ? "?" : literal(String(scalar))
      }.joined()
    case .startsWith: glob = literal(pattern) + "*"
    case .endsWith: glob = "*" + literal(pattern)
    default: return nil
    }
    let test: BoundSQL =
      "CASE WHEN \(Self.holdsNul(text.sql)) THEN dsh_apply('\(function.rawValue)', CAST(\(text.sql) AS BLOB), "
      + "\(bound: .string(pattern))) ELSE \(text.sql) GLOB \(bound: .string(glob)) END"
    var start = ""
    var rest = pattern.unicodeScalars[...]
    while let scalar = rest.first, function == .startsWith || (scalar != "%" && scalar != "_") {
      start.unicodeScalars.append(scalar)
      rest = rest.dropFirst()
    }
    guard function != .endsWith, let range = Self.range(startingWith: start) else { return "(\(test))" }
    let inRange: BoundSQL =
      "\(text.sql) COLLATE BINARY >= \(bound: .string(range.lower)) AND \(text.sql) COLLATE BINARY < "
      + "\(bound: .string(range.upper))"
    // The range says exactly which texts' bytes start with the fixed start, NUL or not: the
    // test after it is needed only for what the pattern asks after that start.
    if function == .startsWith || rest.allSatisfy({ $0 == "%" }) && !rest.isEmpty { return "(\(inRange))" }
    return "(\(inRange) AND \(test))"
  }

  /// Whether a text's bytes hold a NUL, which SQLite's text functions read only up to.
  ///
  /// `instr` reads a text by its length in bytes (a third faster than casting it to a blob).
  static func holdsNul(_ text: BoundSQL) -> BoundSQL { "instr(\(text), char(0)) > 0" }

  /// The texts that start with `prefix`, as a range by bytes.
  ///
  /// UTF-8 orders as code points: from the prefix up to the prefix with its last character's
  /// code point one higher. `nil` for an empty prefix, or one ending in the last code point.
  static func range(startingWith prefix: String) -> (lower: String, upper: String)? {
    var scalars = Array(prefix.unicodeScalars)
    guard let last = scalars.popLast() else { return nil }
    // The surrogate code points are no characters: the next one after them is U+E000.
    let next = last.value == 0xD7FF ? 0xE000 : last.value + 1
    guard let higher = Unicode.Scalar(next) else { return nil }
    scalars.append(higher)
    var upper = ""
    upper.unicodeScalars.append(contentsOf: scalars)
    return (prefix, upper)
  }
}

extension SQLiteQuery {
  /// The translator over this query's columns as checked.
  var translator: SQLTranslator<SQLiteDialect> { SQLTranslator(SQLiteDialect(columns: columnTypes)) }
}

extension BoundSQL {
  /// The SQL with `?` for each value, and the values, as GRDB binds them.
  var sqlite: (sql: String, arguments: [Value]) { (sqliteText, values) }

  /// The SQL with `?` for each value.
  var sqliteText: String { text { value, _ in SQLiteProvider.placeholder(for: value) } }

  /// The values, as GRDB binds them to the `?`s.
  var statementArguments: StatementArguments { StatementArguments(values.map(SQLiteProvider.databaseValue)) }

  /// The SQL with `?` for each value, and the values bound as GRDB binds them.
  var grdb: (sql: String, arguments: StatementArguments) { (sqliteText, statementArguments) }

  /// The SQL with its values written in as SQLite reads them, for `describe` and `explain`:
  /// what one would type into sqlite3.
  var readable: String { text { value, _ in SQLiteQuery.Condition.sqlLiteral(value) } }

  /// SQL written with a `?` for each of `arguments`, in order.
  ///
  /// A `?` inside a string literal or a quoted name (`"ok?"`) is no parameter.
  init(sqlite sql: String, arguments: [Value]) {
    var result: BoundSQL = ""
    var text = ""
    var remaining = arguments.makeIterator()
    var inString = false
    var inName = false
    for character in sql {
      if character == "'", !inName { inString.toggle() }
      if character == "\"", !inString { inName.toggle() }
      if character == "?", !inString, !inName, let argument = remaining.next() {
        result += BoundSQL(stringLiteral: text) + .bound(argument)
        text = ""
      } else {
        text.append(character)
      }
    }
    self = result + BoundSQL(stringLiteral: text)
  }
}

// MARK: group by in SQL

extension SQLiteProvider: GroupingPushdown {
  package var groupingInterrupter: @Sendable () -> Void { { [database] in database?.interrupt() } }

  package func reasonInMemory(_ aggregates: [Aggregate]) -> String? {
    query.translator.reasonInMemory(aggregates)
  }

  /// The groups of `group by` (or `distinct`) computed by one `GROUP BY` in SQLite: each row the
  /// keys then the aggregates, in the order the keys first appear; `nil` when SQL cannot give
  /// exactly what memory would (a key or argument SQL cannot say, `first`, `last`, `list`, a
  /// query source without row order, a stage before that is not a `where`).
  ///
  /// Nulls group together and `1` with `1.0`, as in memory; text keys group by their bytes
  /// (`COLLATE BINARY`). An int `sum` is summed as the two halves of each value (SQLite stops
  /// with an error where dsh gives null and a note) and put together here, exactly. The columns
  /// are the shared builder's (`SQLTranslator.grouping`), as PostgreSQL's are.
  package func groupedRows(
    keys: [RowExpression], aggregates: [Aggregate], notes: ExpressionNotes?, planOnly: Bool = false
  ) throws
    -> [[Value]]?
  {
    // First-seen order needs rowids: a view or a WITHOUT ROWID table groups in memory.
    guard let database, case .table = query.source, let order = query.rowOrder, query.section == nil,
      query.order.isEmpty, query.limit == nil, query.join == nil, query.windows == nil
    else { return nil }
    // The columns the keys and arguments read are checked first, every value (a real in an int
    // column widens it; a text column read as ints gets its CAST), and the SQL is written from
    // what the check found.
    let read = Set((keys + aggregates.compactMap(\.argument)).flatMap(\.fieldPaths).compactMap(\.first))
    // (A plan only is written from the columns as declared, and says so.)
    do {
      if !planOnly { try check(read, for: .values, in: database) }
    } catch let error as DatabaseError {
      throw Self.failure(error, path: displayPath)
    }
    // A key or an argument with a value in it (`if(age > 40, …)`) groups in memory: its SQL is
    // written more than once, and SQLite would take each for another expression.
    guard let grouping = query.translator.grouping(keys: keys, aggregates: aggregates), !grouping.bindsValues
    else { return nil }
    var statement = SQLSelect(
      list: (grouping.keys.map(\.sql) + grouping.columns).joined(separator: ", "), from: query.from)
    statement.conditions = query.whereConditions
    statement.groupBy = grouping.keys.map(\.sql)
    statement.orderBy = ["min(\(order))"]
    let (sql, values) = statement.sql.sqlite
    let arguments = StatementArguments(values.map(Self.databaseValue))
    lastGrouping = statement.sql
    lastGroupingUnchecked = planOnly
    if planOnly { return [] }
    let rows: [StoredRow]
    do {
      rows = try reading(database) { db in try StoredRow.fetchAll(db, sql: sql, arguments: arguments) }
    } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
      throw DataSourceError.cancelled
    } catch let error as DatabaseError {
      throw Self.failure(error, path: displayPath)
    }
    if Task.isCancelled { throw DataSourceError.cancelled }
    return rows.map { row in
      grouping.values(aggregates: aggregates, notes: notes, value: { Self.value(row[$0], as: $1) }) {
        column in
        // The sums of the high and low 32 bits of each value, put together exactly.
        guard let high = row.int(column), let low = row.int(column + 1) else { return nil }
        return Int128(high) << 32 + Int128(low)
      }
    }
  }
}
