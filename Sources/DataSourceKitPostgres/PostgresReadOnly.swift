import DataSourceKit

/// What reading "read-only" can promise on a PostgreSQL server, and the calls it refuses.
///
/// Every statement runs alone in a transaction begun `READ ONLY` and rolled back (see
/// ``PostgresSession``): no row, setting, sequence or large object it makes outlives it. A few
/// server functions act outside any transaction, so a rollback cannot undo them: a session's
/// advisory lock stays held (another client waiting on it waits for ever), another backend stays
/// terminated, a file `lo_export` wrote stays written, a statement `dblink_exec` ran on another
/// connection stays committed, a replication slot stays made. A query that names one of them is
/// refused before it runs (anywhere in its text: a denylist read word by word cannot follow every
/// way the server reads a string, so it reads more than the server would), and after every
/// statement the session lets go of any advisory lock (`pg_advisory_unlock_all()`), in case a
/// view or function took one out of sight.
///
/// What this cannot promise: a function or view that calls such a function inside its own body
/// is not seen by reading the query's words, and a superuser's functions may write files or
/// reach other servers. Connect as a role that may only read (`GRANT SELECT`); dsh warns when
/// the role is a superuser.
enum PostgresReadOnly {
  /// Functions whose effect outlives the statement's rolled-back transaction, by name; and the
  /// functions that run SQL given as text, which could be built to call one out of sight.
  static let lastingFunctions: Set<String> = [
    "pg_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_lock_shared",
    "pg_advisory_unlock", "pg_advisory_unlock_shared", "pg_advisory_unlock_all",
    "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
    "pg_promote", "pg_switch_wal", "pg_create_restore_point", "pg_log_backend_memory_contexts",
    "pg_create_physical_replication_slot", "pg_create_logical_replication_slot",
    "pg_replication_slot_advance", "pg_drop_replication_slot", "pg_copy_physical_replication_slot",
    "pg_copy_logical_replication_slot", "pg_logical_emit_message", "pg_logical_slot_get_changes",
    "pg_logical_slot_get_binary_changes", "pg_logical_slot_peek_changes",
    "pg_logical_slot_peek_binary_changes",
    "pg_replication_origin_create", "pg_replication_origin_drop", "pg_replication_origin_advance",
    "pg_replication_origin_session_setup", "pg_replication_origin_session_reset",
    "pg_replication_origin_xact_setup", "pg_replication_origin_xact_reset",
    "pg_stat_reset", "pg_stat_reset_shared", "pg_stat_reset_single_table_counters",
    "pg_stat_reset_single_function_counters", "pg_stat_reset_slru", "pg_stat_reset_replication_slot",
    "pg_stat_reset_subscription_stats", "pg_backup_start", "pg_backup_stop", "pg_start_backup",
    "pg_stop_backup", "pg_wal_replay_pause", "pg_wal_replay_resume",
    "lo_import", "lo_export", "lo_unlink", "lo_create", "lo_creat", "lo_open", "lo_write", "lo_put",
    "lo_truncate", "lo_truncate64", "lo_from_bytea", "lo_close", "lowrite",
    "dblink", "dblink_exec", "dblink_connect", "dblink_connect_u", "dblink_open", "dblink_fetch",
    "dblink_close", "dblink_send_query", "dblink_get_result", "dblink_disconnect", "dblink_cancel_query",
    "dblink_get_notify", "pg_file_write", "pg_file_rename", "pg_file_unlink", "pg_file_sync",
    // SQL given as text, which concatenation could make into any of the above.
    "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "ts_stat",
  ]

  /// The first word of `sql` that names such a function.
  ///
  /// Read everywhere: in strings and comments too (SQL run from a string, or a string read longer than the server reads it, would
  /// otherwise hide a call), with `U&"…"` escapes (`\0061`, `\+000061`) decoded first. A name
  /// in a comment is refused as well: dsh cannot always tell where a comment ends as the server
  /// does, and says so rather than guess. `UESCAPE`, which changes the escape, is refused too.
  static func lastingCall(in sql: String) -> String? {
    let decoded = decodingUnicodeEscapes(sql)
    for word in words(of: decoded) {
      let name = word.lowercased()
      if lastingFunctions.contains(name) { return name }
      if name == "uescape" { return name }
    }
    return nil
  }

  /// Refuses a query that names such a function.
  static func check(_ sql: String) throws {
    guard let name = lastingCall(in: sql) else { return }
    if name == "uescape" {
      throw DataSourceError.sourceFailed(
        message:
          "the query changes its escape character (UESCAPE), so dsh cannot read which functions it calls")
    }
    throw DataSourceError.sourceFailed(
      message:
        "the query names \(name), whose effect outlives the read-only transaction dsh runs it in (a rollback does not undo it), or which runs SQL given as text: dsh does not run it (a name in a string or a comment counts too)"
    )
  }

  /// `sql` with every `\XXXX` and `\+XXXXXX` (hexadecimal) written as its character, as a
  /// `U&'…'` or `U&"…"` literal means it; elsewhere the decoding only finds more words.
  static func decodingUnicodeEscapes(_ sql: String) -> String {
    let scalars = Array(sql.unicodeScalars)
    var out = String.UnicodeScalarView()
    var i = 0
    func hex(_ from: Int, _ count: Int) -> UInt32? {
      guard from + count <= scalars.count else { return nil }
      var value: UInt32 = 0
      for k in from..<from + count {
        guard let digit = Character(scalars[k]).hexDigitValue else { return nil }
        value = value * 16 + UInt32(digit)
      }
      return value
    }
    while i < scalars.count {
      if scalars[i] == "\\" {
        if i + 1 < scalars.count, scalars[i + 1] == "+", let value = hex(i + 2, 6),
          let scalar = Unicode.Scalar(value)
        {
          out.append(scalar)
          i += 8
          continue
        }
        if let value = hex(i + 1, 4), let scalar = Unicode.Scalar(value) {
          out.append(scalar)
          i += 5
          continue
        }
      }
      out.append(scalars[i])
      i += 1
    }
    return String(out)
  }

  /// Every run of letters, digits, `_` and `$` in `sql`: identifiers, keywords and the words
  /// inside strings and comments alike.
  static func words(of sql: String) -> [String] {
    var words: [String] = []
    var word = String.UnicodeScalarView()
    for scalar in sql.unicodeScalars {
      if scalar == "_" || scalar == "$" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
        word.append(scalar)
      } else if !word.isEmpty {
        words.append(String(word))
        word = String.UnicodeScalarView()
      }
    }
    if !word.isEmpty { words.append(String(word)) }
    return words
  }
}
