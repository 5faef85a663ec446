//
//  PostgresContents.swift
//  DataSourceKitPostgres
//
//  What a database holds, as psql's `\dt` and `\d` would tell: for `describe postgres "…"`.
//

import DataSourceKit
import DataSourceKitValues

/// One table or view of a PostgreSQL database: its name, its rows and its columns.
public struct PostgresTableSummary: Sendable, Equatable {
  /// Its name as `postgres "…" table NAME` takes it: bare in the `public` schema, else
  /// `schema.name`.
  public var name: String
  /// `table`, `view`, `materialized view`, `partitioned table` or `foreign table`.
  public var kind: String
  /// Its rows: the planner's estimate for a large analysed table, counted for a small one, and
  /// `nil` for a view (counting would run its query) or a table too large to count unanalysed.
  public var rowCount: Int?
  /// Whether ``rowCount`` is the planner's estimate rather than a count.
  public var isEstimate: Bool
  /// Its columns with their types as psql writes them (`integer`, `character varying(40)`).
  public var columns: [Column]

  /// A column: its name and type.
  public struct Column: Sendable, Equatable {
    /// Its name.
    public var name: String
    /// Its type, as `format_type` writes it.
    public var type: String
  }
}

extension PostgresProvider {
  /// Tables counted exactly rather than estimated: up to this many 8 KB pages on disk (80 MB).
  static let countedPages = 10_240

  /// The tables and views of the database `url` names, by schema and name, the server's own
  /// schemas left out.
  ///
  /// A table small enough on disk is counted; a larger one (or one the user may not read, or
  /// one whose count runs past `statementTimeout` seconds, 10 unless given) reports the
  /// planner's estimate, or nothing when the server has not analysed it, so describing a
  /// database never scans a large table.
  ///
  /// - Throws: ``DataSourceError`` as a load from the same server would (no connection, a refusal).
  public static func contents(ofDatabaseAt url: String, statementTimeout: Double? = 10) async throws
    -> [PostgresTableSummary]
  {
    // A table source, so that an error quotes no SQL of the user's (there is none).
    let provider = try PostgresProvider(
      url: url, source: .table("pg_catalog.pg_class"), statementTimeout: statementTimeout)
    do {
      let session = try await PostgresSession.open(provider.location, statementTimeout: statementTimeout)
      let relations = try await session.rows(
        """
        SELECT c.oid::text, n.nspname::text, c.relname::text, c.relkind::text, c.reltuples::bigint::text,
          (pg_relation_size(c.oid) / 8192)::text, has_table_privilege(c.oid, 'SELECT')::text
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
          AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%' AND NOT c.relispartition
        ORDER BY n.nspname = 'public' DESC, n.nspname, c.relname
        """
      ).rows
      let columns = try await session.rows(
        """
        SELECT a.attrelid::text, a.attname::text, format_type(a.atttypid, a.atttypmod)
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
          AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY a.attrelid, a.attnum
        """
      ).rows
      var columnsByTable: [String: [PostgresTableSummary.Column]] = [:]
      for row in columns {
        guard let table = row[0], let name = row[1] else { continue }
        columnsByTable[table, default: []].append(.init(name: name, type: row[2] ?? ""))
      }
      var summaries: [PostgresTableSummary] = []
      for row in relations {
        guard let oid = row[0], let schema = row[1], let name = row[2], let kind = row[3] else { continue }
        let estimate = row[4].flatMap { Int($0) } ?? -1
        let pages = row[5].flatMap { Int($0) } ?? 0
        let qualified = PostgresLocation.quoted(schema) + "." + PostgresLocation.quoted(name)
        var rowCount: Int?
        var isEstimate = false
        switch kind {
        case "r", "m", "p":
          // A partitioned table's own file is empty: its rows are in its partitions. A table
          // the user may not read, or one locked past the timeout, keeps the planner's estimate.
          let readable = row[6] == "true"
          if kind != "p", readable, pages <= countedPages,
            let counted = try? await session.rows(
              BoundSQL(stringLiteral: "SELECT count(*) FROM \(qualified)")
            )
            .firstInt
          {
            rowCount = counted
          } else if estimate >= 0 {
            (rowCount, isEstimate) = (estimate, true)
          }
        default:
          break
        }
        summaries.append(
          PostgresTableSummary(
            name: schema == "public" ? name : schema + "." + name, kind: Self.kindName(kind),
            rowCount: rowCount, isEstimate: isEstimate, columns: columnsByTable[oid] ?? []))
      }
      return summaries
    } catch DataSourceError.cancelled {
      throw DataSourceError.cancelled
    } catch {
      throw provider.dataSourceError(error)
    }
  }

  private static func kindName(_ relkind: String) -> String {
    switch relkind {
    case "v": "view"
    case "m": "materialized view"
    case "p": "partitioned table"
    case "f": "foreign table"
    default: "table"
    }
  }
}
