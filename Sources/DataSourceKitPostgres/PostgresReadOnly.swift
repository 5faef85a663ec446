import DataSourceKit

/// What reading "read-only" can promise on a PostgreSQL server, and the calls it refuses.
///
/// Every statement runs alone in a transaction begun `READ ONLY` and rolled back (see
/// ``PostgresSession``): no row, setting, sequence or large object it makes outlives it. A few
/// server functions act outside any transaction, so a rollback cannot undo them: a session's
/// advisory lock stays held (another client waiting on it waits for ever), another backend stays
/// terminated, a file `lo_export` wrote stays written, a statement `dblink_exec` ran on another
/// connection stays committed, a replication slot stays made. A query that names one of them is
/// refused before it runs, and after every statement the session lets go of any advisory lock
/// (`pg_advisory_unlock_all()`), in case a view or function took one out of sight.
///
/// What this cannot promise: a function or view that calls such a function inside its own body
/// is not seen by reading the query's words, and a superuser's functions may write files or
/// reach other servers. Connect as a role that may only read (`GRANT SELECT`); dsh warns when
/// the role is a superuser.
enum PostgresReadOnly {
  /// Functions whose effect outlives the statement's rolled-back transaction, by name.
  static let lastingFunctions: Set<String> = [
    "pg_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_lock_shared",
    "pg_advisory_unlock", "pg_advisory_unlock_shared", "pg_advisory_unlock_all",
    "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
    "pg_promote", "pg_switch_wal", "pg_create_restore_point", "pg_log_backend_memory_contexts",
    "pg_replication_slot_advance", "pg_drop_replication_slot", "pg_copy_physical_replication_slot",
    "pg_copy_logical_replication_slot", "pg_logical_emit_message",
    "dblink", "dblink_exec", "dblink_connect", "dblink_connect_u", "dblink_open", "dblink_fetch",
    "dblink_send_query", "pg_file_write", "pg_file_rename", "pg_file_unlink", "pg_file_sync",
  ]

  /// Prefixes of such functions: the large-object calls (`lo_export` writes a server file,
  /// `lo_import` reads one) and the ways to make a replication slot.
  static let lastingPrefixes = ["lo_", "pg_create_"]

  /// The first word of `sql` that names a function whose effect a rollback cannot undo, read
  /// outside strings and comments (a quoted identifier counts: `"pg_terminate_backend"(1)`).
  static func lastingCall(in sql: String) -> String? {
    for word in words(of: sql) {
      let name = word.lowercased()
      if lastingFunctions.contains(name) { return name }
      // lo_* and pg_create_* only where called: a column may be named lo_price.
      if lastingPrefixes.contains(where: { name.hasPrefix($0) }), isCalled(word, in: sql) { return name }
    }
    return nil
  }

  /// Refuses a query that names such a function.
  static func check(_ sql: String) throws {
    guard let name = lastingCall(in: sql) else { return }
    throw DataSourceError.sourceFailed(
      message:
        "the query calls \(name), whose effect outlives the read-only transaction dsh runs it in (a rollback does not undo it): dsh does not run it"
    )
  }

  /// Whether `word` is followed by `(` somewhere in `sql` (spaces allowed between).
  private static func isCalled(_ word: String, in sql: String) -> Bool {
    var rest = Substring(sql)
    while let found = rest.range(of: word, options: .caseInsensitive) {
      let after = rest[found.upperBound...].drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\"" }
      if after.first == "(" { return true }
      rest = rest[found.upperBound...]
    }
    return false
  }

  /// The identifiers of `sql`, plain or quoted, skipping string constants (`'…'`, `E'…'`,
  /// dollar-quoted `$tag$…$tag$`) and comments (`--`, nested `/* */`).
  static func words(of sql: String) -> [String] {
    let scalars = Array(sql.unicodeScalars)
    var words: [String] = []
    var i = 0
    func isWordStart(_ c: Unicode.Scalar) -> Bool { c == "_" || c.properties.isAlphabetic }
    func isWordPart(_ c: Unicode.Scalar) -> Bool { isWordStart(c) || ("0"..."9").contains(c) || c == "$" }
    while i < scalars.count {
      let c = scalars[i]
      let next = i + 1 < scalars.count ? scalars[i + 1] : nil
      if c == "-", next == "-" {
        while i < scalars.count, scalars[i] != "\n" { i += 1 }
      } else if c == "/", next == "*" {
        var depth = 0
        repeat {
          if scalars[i] == "/", i + 1 < scalars.count, scalars[i + 1] == "*" {
            depth += 1
            i += 2
          } else if scalars[i] == "*", i + 1 < scalars.count, scalars[i + 1] == "/" {
            depth -= 1
            i += 2
          } else {
            i += 1
          }
        } while depth > 0 && i < scalars.count
      } else if c == "'" {
        // A backslash escapes only in E'…', but skipping it elsewhere too only shortens a
        // string that ends in a backslash, which then reads a few more words: never fewer.
        i += 1
        while i < scalars.count {
          if scalars[i] == "\\" {
            i += 2
          } else if scalars[i] == "'" {
            if i + 1 < scalars.count, scalars[i + 1] == "'" { i += 2 } else { break }
          } else {
            i += 1
          }
        }
        i += 1
      } else if c == "\"" {
        var word = ""
        i += 1
        while i < scalars.count {
          if scalars[i] == "\"" {
            if i + 1 < scalars.count, scalars[i + 1] == "\"" {
              word.unicodeScalars.append("\"")
              i += 2
              continue
            }
            break
          }
          word.unicodeScalars.append(scalars[i])
          i += 1
        }
        i += 1
        words.append(word)
      } else if c == "$", let tagEnd = dollarTagEnd(scalars, from: i) {
        let tag = scalars[i...tagEnd]
        i = tagEnd + 1
        while i < scalars.count {
          if scalars[i] == "$", i + tag.count <= scalars.count, scalars[i..<i + tag.count].elementsEqual(tag)
          {
            i += tag.count
            break
          }
          i += 1
        }
      } else if isWordStart(c) {
        var word = ""
        while i < scalars.count, isWordPart(scalars[i]) {
          word.unicodeScalars.append(scalars[i])
          i += 1
        }
        words.append(word)
      } else {
        i += 1
      }
    }
    return words
  }

  /// The index of the `$` that closes a dollar-quote tag opened at `start` (`$$` or `$tag$`).
  private static func dollarTagEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int? {
    var i = start + 1
    while i < scalars.count {
      let c = scalars[i]
      if c == "$" { return i }
      guard c == "_" || c.properties.isAlphabetic || (i > start + 1 && ("0"..."9").contains(c)) else {
        return nil
      }
      i += 1
    }
    return nil
  }
}
