import DataSourceKit
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// One connection to a server, shared by a provider and the providers its stages make, and
/// closed when the last of them goes.
///
/// Every statement runs in a read-only session, in UTC, with floats written so they read back
/// exactly. A running statement can be cancelled from any thread (``cancelRunning()``): the
/// server is asked to cancel it from a second connection, with `pg_cancel_backend` on this
/// connection's backend. (postgres-nio keeps the key of the protocol's own cancel request to
/// itself; `pg_cancel_backend` sends the backend the same signal, and a user may always cancel
/// its own statements.)
final class PostgresSession: Sendable {
  let location: PostgresLocation
  let connection: PostgresConnection
  /// The server process that runs this connection's statements.
  let backendPID: Int32
  /// Whether the database holds text as UTF-8, so that SQL counts characters as dsh does.
  let isUTF8: Bool
  /// A cancel on its way to the server: the next statement waits for it, or the cancel could
  /// land on that statement instead.
  private let cancelling = Mutex<Task<Void, Never>?>(nil)

  private init(location: PostgresLocation, connection: PostgresConnection, backendPID: Int32, isUTF8: Bool) {
    self.location = location
    self.connection = connection
    self.backendPID = backendPID
    self.isUTF8 = isUTF8
  }

  deinit {
    // Closed without waiting; the callback holds the connection until it is closed (one that
    // goes away open is a programming error to postgres-nio).
    let connection = self.connection
    let closing: EventLoopFuture<Void> = connection.close()
    closing.whenComplete { _ in withExtendedLifetime(connection) {} }
  }

  /// Connects, and sets the session up: read-only, UTC, ISO dates, exact floats.
  static func open(_ location: PostgresLocation, statementTimeout: Double?) async throws -> PostgresSession {
    let connection = try await connect(location)
    do {
      var settings = [
        "SET default_transaction_read_only = on", "SET TimeZone = 'UTC'", "SET DateStyle = 'ISO, YMD'",
        "SET extra_float_digits = 3", "SET standard_conforming_strings = on",
      ]
      if let statementTimeout {
        settings.append("SET statement_timeout = \(max(1, Int((statementTimeout * 1000).rounded())))")
      }
      for setting in settings { _ = try await connection.query(setting).get() }
      let about = try await connection.query(
        "SELECT pg_backend_pid(), current_setting('server_encoding'), current_setting('server_version_num')::int"
      ).get()
      let row = about.rows.first?.makeRandomAccess()
      let pid = try row?[0].decode(Int32.self) ?? 0
      let encoding = try row?[1].decode(String.self) ?? ""
      // A dsh that goes away mid-query (killed, its script interrupted) leaves no query running:
      // the server looks for its client every second while it runs one (PostgreSQL 14 on).
      if try row?[2].decode(Int32.self) ?? 0 >= 140_000 {
        _ = try await connection.query("SET client_connection_check_interval = 1000").get()
      }
      return PostgresSession(
        location: location, connection: connection, backendPID: pid, isUTF8: encoding == "UTF8")
    } catch {
      try? await connection.close()
      throw error
    }
  }

  private static func connect(_ location: PostgresLocation) async throws -> PostgresConnection {
    var logger = Logger(label: "dsh.postgres")
    logger.logLevel = .critical
    return try await PostgresConnection.connect(
      configuration: try location.configuration(), id: 1, logger: logger)
  }

  var isOpen: Bool { !connection.isClosed }

  /// Runs a statement; cancelling the task cancels it on the server.
  ///
  /// - Throws: ``DataSourceError/cancelled`` when cancelled, else the server's error.
  func rows(_ sql: String) async throws -> PostgresQueryResult {
    await cancelling.withLock { $0 }?.value
    if Task.isCancelled { throw DataSourceError.cancelled }
    do {
      return try await withTaskCancellationHandler {
        try await connection.query(sql).get()
      } onCancel: {
        cancelRunning()
      }
    } catch {
      if Task.isCancelled { throw DataSourceError.cancelled }
      throw error
    }
  }

  /// Runs a statement and waits for it on this thread: a view asks for rows synchronously.
  func rowsNow(_ sql: String) throws -> PostgresQueryResult {
    if let pending = cancelling.withLock({ $0 }) {
      let done = DispatchSemaphore(value: 0)
      Task.detached {
        await pending.value
        done.signal()
      }
      done.wait()
    }
    return try connection.query(sql).wait()
  }

  /// Asks the server to cancel the statement this connection runs now, if any.
  ///
  /// The request goes from a second connection; this returns at once.
  func cancelRunning() {
    let location = self.location
    let pid = backendPID
    cancelling.withLock { pending in
      pending = Task.detached {
        guard let other = try? await PostgresSession.connect(location) else { return }
        _ = try? await other.query("SELECT pg_cancel_backend(\(pid))").get()
        try? await other.close()
      }
    }
  }
}
