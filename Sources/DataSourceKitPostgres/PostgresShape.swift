import DataSourceKit
import DataSourceKitValues
import Foundation

/// The SQL under a provider in `describe`, with the values bound to its parameters.
final class PostgresSQLNode: CompositionNode {
  let sql: BoundSQL
  init(sql: BoundSQL) { self.sql = sql }
  var nodeTitle: String {
    "sql: " + sql.statement.text.split(whereSeparator: \.isNewline).joined(separator: " ")
  }
  var nodeDetail: String? {
    let parameters = sql.parameterList
    return parameters.isEmpty ? nil : "with " + parameters
  }
}

/// What the server told of a source when it was prepared: its columns and the order of its
/// rows.
struct PostgresShape: Sendable {
  /// A column that alone orders the rows and holds a different value in every row.
  struct UniqueKey: Sendable {
    var name: String
    /// The column in SQL.
    var sql: String
    /// Whether it holds ints (then a key range can stand for a page).
    var isInt: Bool
  }

  var columns: [PostgresColumn]
  /// What orders the rows when no stage does (the key, the primary key, `ctid`), which also
  /// keeps equal sort keys in order; empty for a view or query without a key.
  var baseOrder: [String]
  var uniqueKey: UniqueKey?
  /// Whether the database holds text as UTF-8 (see ``PostgresSession/isUTF8``).
  var isUTF8: Bool

  /// One value per row that orders the rows as ``baseOrder`` does, for `min(…)` to find the row
  /// a group is first seen in: the unique key, `ctid`, or for a partitioned table (postgres_fdw
  /// shards among them) its partition and `ctid` made one number; `nil` for a view or query.
  var firstSeenOrder: String? {
    if let uniqueKey { return uniqueKey.sql }
    switch baseOrder {
    case ["dsh_q.ctid"]: return "dsh_q.ctid"
    case ["dsh_q.tableoid", "dsh_q.ctid"]:
      // A block number has 32 bits and an item 16: the partition's oid above both, in numeric.
      let place = "dsh_q.ctid::text::point"
      return
        "(dsh_q.tableoid::oid::int8::numeric * 281474976710656 + (\(place))[0]::int8 * 65536 + (\(place))[1]::int8)"
    default: return nil
    }
  }

  /// The shape of the rows behind window functions: the window columns after the source's,
  /// and the source's order through the subquery's `dsh_b0`, ….
  func windowed(_ windows: PostgresQuery.Windows) -> PostgresShape {
    var shape = self
    shape.columns += windows.columns.map {
      PostgresColumn(name: $0.name, dataType: Self.dataType(of: $0.type), options: ReadOptions())
    }
    shape.baseOrder = windows.baseOrder.indices.map { "dsh_q.dsh_b\($0)" }
    return shape
  }

  /// The server's type that holds values of `type` as dsh reads them.
  static func dataType(of type: ValueType) -> PostgresType {
    switch type {
    case .int: .int8
    case .double: .float8
    case .bool: .bool
    case .date: .date
    default: .text
    }
  }

  /// The cast to the server's type that holds values of `type`, or `nil` for one dsh does not
  /// compare on the server.
  static func castName(_ type: ValueType) -> String? {
    switch type {
    case .int: "int8"
    case .double: "float8"
    case .bool: "boolean"
    case .date: "date"
    case .text: "text"
    default: nil
    }
  }
}

/// A column of a source, with how dsh reads it and how SQL can say the value dsh reads.
struct PostgresColumn: Sendable {
  var name: String
  var dataType: PostgresType
  var type: ValueType
  /// Set for `json` and `jsonb`: the text is parsed.
  var isJSON: Bool
  var declared: DeclaredType?
  /// The value dsh reads from the column, in SQL, or `nil` when SQL cannot say it (a
  /// timestamp, JSON, a declared type): stages on it run in memory.
  var valueSQL: BoundSQL?
  /// Whether equal values of the column are equal bytes (a table's column whose collation is
  /// deterministic, as every database default is): `=` then needs no `COLLATE "C"`.
  var bytewiseEquality = false

  init(name: String, dataType: PostgresType, options: ReadOptions) {
    self.name = name
    self.dataType = dataType
    let (type, isJSON) = PostgresProvider.valueType(of: dataType)
    self.declared = options.types[name]
    self.type = declared?.type ?? type
    self.isJSON = isJSON
    self.valueSQL = declared == nil ? PostgresColumn.valueSQL(name, dataType, type, options) : nil
  }

  private static func valueSQL(
    _ name: String, _ dataType: PostgresType, _ type: ValueType, _ options: ReadOptions
  )
    -> BoundSQL?
  {
    let column = PostgresLocation.quoted(name)
    var sql: BoundSQL
    switch dataType {
    case .int2, .int4, .int8, .float8, .bool, .date: sql = "\(column)"
    // dsh reads the double the column's text spells, not the exact decimal or the float4.
    case .float4, .numeric: sql = "\(column)::text::float8"
    case .timestamp, .timestamptz, .json, .jsonb, .oid: return nil
    default: sql = "\(column)::text"
    }
    // A marker is null wherever it is the column's text.
    let markers = options.nullMarkers.filter {
      type == .text || PostgresProvider.convert($0, to: DeclaredType(type)) != nil
    }
    if !markers.isEmpty {
      sql =
        "CASE WHEN \(column)::text IN (\(markers.map { BoundSQL.serverText($0) }.joined(separator: ", "))) THEN NULL ELSE \(sql) END"
    }
    return "(\(sql))"
  }
}

/// A server type, by its `pg_type` oid: the built-in types dsh reads as its own.
struct PostgresType: Sendable, Equatable {
  var oid: UInt32

  static let bool = PostgresType(oid: 16)
  static let int8 = PostgresType(oid: 20)
  static let int2 = PostgresType(oid: 21)
  static let int4 = PostgresType(oid: 23)
  static let oid = PostgresType(oid: 26)
  static let json = PostgresType(oid: 114)
  static let float4 = PostgresType(oid: 700)
  static let float8 = PostgresType(oid: 701)
  static let date = PostgresType(oid: 1082)
  static let timestamp = PostgresType(oid: 1114)
  static let timestamptz = PostgresType(oid: 1184)
  static let numeric = PostgresType(oid: 1700)
  static let jsonb = PostgresType(oid: 3802)
  static let text = PostgresType(oid: 25)
}
