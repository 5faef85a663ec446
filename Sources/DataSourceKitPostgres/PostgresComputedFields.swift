import DataSourceKit
import DataSourceKitValues

// `extend` on the server: each field computed in the subquery the stages after it read, as window
// functions are (`PostgresQuery.Windows`), where SQL gives every value memory gives. A sort and
// a limit over the field then run there too: `extend ppc = price / carat | sort by ppc desc |
// limit 5` is one statement, not every row's price and carat read to sort them in memory.
//
// Arithmetic is where the server and dsh part: the server stops the statement at an int that
// overflows, a double that overflows to infinity or underflows to zero, and a division by zero,
// where dsh gives null (with a note) or IEEE's answer. So before the fields go down one statement
// counts, over the rows they are computed for, the rows whose operands are outside the ranges
// where no operation can overflow or underflow, and the rows that divide by zero: any of the
// first and the fields stay in memory; the second are the note's, and the server is given null
// for them as dsh has.
extension PostgresProvider {
  /// A provider that also computes `fields` on the server, or `nil` when SQL would give another value.
  ///
  /// SQL gives another value for a function the server computes otherwise, an operand past the
  /// safe ranges, or a name the rows already have. The count of divisions by zero goes to `notes`.
  package func pushingDownFields(
    _ fields: [ComputedFieldsProvider.Field], label: String, notes: ExpressionNotes?
  )
    -> (any DataProvider<Value>)?
  {
    guard let shape, let session, query.windows == nil, query.join == nil, query.limit == nil,
      !shape.baseOrder.isEmpty,
      // The names the subquery gives its own columns beside the source's.
      !shape.columns.contains(where: { $0.name.lowercased().hasPrefix("dsh_") })
    else { return nil }
    var taken = Set(shape.columns.map(\.name))
    var checked: BoundSQL?
    var arithmetic = ServerArithmetic(translator: PostgresTranslator(shape: shape))
    var columns: [PostgresQuery.Windows.Column] = []
    for field in fields {
      guard let type = field.type, let cast = PostgresShape.castName(type),
        !field.name.lowercased().hasPrefix("dsh_"), taken.insert(field.name).inserted,
        let value = arithmetic.value(field.expression), value.type == type
      else { return nil }
      columns.append(
        PostgresQuery.Windows.Column(name: field.name, sql: "(\(value.sql))::\(cast)", type: type))
    }
    if !arithmetic.unsafe.isEmpty || !arithmetic.byZero.isEmpty {
      func any(_ conditions: [BoundSQL]) -> BoundSQL {
        conditions.isEmpty ? "false" : conditions.map { "(\($0))" as BoundSQL }.joined(separator: " OR ")
      }
      let check: BoundSQL =
        "SELECT count(*) FILTER (WHERE \(any(arithmetic.unsafe)))::text, count(*) FILTER (WHERE \(any(arithmetic.byZero)))::text \(query.from)\(query.whereClause())"
      // A plan (`explain`) shows the count for the run to make: it reads every row.
      if Planning.writesOnly {
        checked = check
      } else {
        guard let counts = try? session.rowsNow(check).rows.first, counts.count == 2,
          counts[0] == "0", let zeros = counts[1].flatMap({ Int($0) })
        else { return nil }
        if zeros > 0 { notes?.add(.divisionByZero, times: zeros) }
      }
    }
    let windows = PostgresQuery.Windows(
      conditions: query.conditions, columns: columns, baseOrder: shape.baseOrder, label: label)
    var computed = query
    computed.windows = windows
    computed.conditions = []
    let provider = with(computed, shape: shape.windowed(windows))
    provider.arithmeticCheck = checked
    return provider
  }
}

/// Arithmetic the server computes as dsh does within ranges it states: each `+ - * /` of
/// numbers written with the condition under which it may not (`unsafe`) and the one under
/// which it divides by zero (`byZero`), for a statement to count before the SQL is trusted.
struct ServerArithmetic {
  let translator: PostgresTranslator
  /// Conditions true of a row whose operands are outside the ranges where the server's
  /// arithmetic is IEEE's or an int's without overflow.
  private(set) var unsafe: [BoundSQL] = []
  /// Conditions true of a row that divides a value by zero (dsh's null, with a note).
  private(set) var byZero: [BoundSQL] = []

  /// The expression's value in SQL, typed; `nil` where the server would give another.
  mutating func value(_ expression: RowExpression) -> PostgresTranslator.Fragment? {
    guard case .binary(let a, let op, let b) = expression, op.isArithmetic else {
      return translator.value(expression)
    }
    guard op != .remainder, let x = value(a), let y = value(b), x.type.isNumber, y.type.isNumber else {
      return nil
    }
    if x.type == .int, y.type == .int, op != .divide {
      // Ints: computed in numeric first, where nothing overflows, to find a result past 64 bits.
      unsafe.append(
        "((\(x.sql))::numeric \(op.rawValue) (\(y.sql))::numeric) NOT BETWEEN -9223372036854775808 AND 9223372036854775807"
      )
      return PostgresTranslator.Fragment(
        sql: "((\(x.sql))::int8 \(op.rawValue) (\(y.sql))::int8)", type: .int)
    }
    let (p, q): (BoundSQL, BoundSQL) = ("(\(x.sql))::float8", "(\(y.sql))::float8")
    switch op {
    case .add, .subtract:
      // Below half the greatest double a sum cannot overflow; the server checks no underflow
      // here. NaN orders above every number, so it is outside too.
      unsafe.append("abs(\(p)) > 8e307 OR abs(\(q)) > 8e307")
      return PostgresTranslator.Fragment(sql: "(\(p) \(op.rawValue) \(q))", type: .double)
    default:
      // A product or quotient of magnitudes within 1e-150 … 1e150 (or zero) is within
      // 1e-300 … 1e300: no overflow, and no underflow the server would stop at.
      unsafe.append(
        "abs(\(p)) > 1e150 OR abs(\(q)) > 1e150 OR (\(p) <> 0 AND abs(\(p)) < 1e-150) OR (\(q) <> 0 AND abs(\(q)) < 1e-150)"
      )
      guard op == .divide else {
        return PostgresTranslator.Fragment(sql: "(\(p) * \(q))", type: .double)
      }
      // dsh gives null for a null operand before it looks at the divisor.
      byZero.append("\(q) = 0 AND \(p) IS NOT NULL")
      return PostgresTranslator.Fragment(
        sql: "(CASE WHEN \(q) = 0 THEN NULL ELSE \(p) / \(q) END)", type: .double)
    }
  }
}
