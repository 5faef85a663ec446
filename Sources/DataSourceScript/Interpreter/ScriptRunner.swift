import DataSourceKit
import DataSourceKitValues
import Foundation

/// The script a session is running, and the scripts that sourced it: `source` refuses cycles
/// and runaway nesting.
@MainActor
final class ScriptRunner {
  /// The script of the statement running now: statements slice their text out of it.
  var current = SourceFile(name: nil, text: "")
  /// Scripts running, the top-level one first and the innermost last: canonical paths, and the
  /// paths as written for messages.
  private var stack: [(canonical: String, path: String)] = []
  static let maximumDepth = 64

  /// Enters a script, unless it is already running (the top-level script included) or nesting
  /// is too deep.
  func enter(_ canonical: String, path: String, at range: SourceRange) throws(Diagnostic) {
    if let first = stack.firstIndex(where: { $0.canonical == canonical }) {
      throw Diagnostic(.sourceCycle(chain: stack[first...].map(\.path) + [path]), at: range)
    }
    if stack.count >= Self.maximumDepth {
      throw Diagnostic(.sourceDepth(limit: Self.maximumDepth), at: range)
    }
    stack.append((canonical, path))
  }

  func leave() { stack.removeLast() }

  /// The paths of the scripts running, as resolved when entered.
  var runningPaths: [String] { stack.map(\.canonical) }
}

extension Session {
  /// `source "PATH"`: runs another script in this session.
  func source(_ path: String, pathRange: SourceRange) async throws {
    if environment.sandbox != nil {
      throw Diagnostic(.refusedBySafeMode(.sourcing(path: path)), at: pathRange)
    }
    let resolved = resolve(path)
    let canonical = Sandbox.canonical(resolved)
    let text: String
    do {
      text = try ScriptFiles.read(resolved, displayPath: path)
    } catch let error as DataSourceError {
      throw Diagnostic(.dataSource(error), at: pathRange)
    }
    try scripts.enter(canonical, path: path, at: pathRange)
    defer { scripts.leave() }
    // The sourced script reports its own errors; the `source` statement fails without another.
    let folder = URL(fileURLWithPath: canonical).deletingLastPathComponent().path
    if !(await run(SourceFile(name: path, text: text, directory: folder))) { throw AlreadyReported() }
  }
}

extension Session {
  /// Runs a script named on the command line: it counts as running, so a script it sources
  /// cannot source it back.
  public func runScript(_ source: SourceFile, path: String, bail: Bool = false) async -> Bool {
    try? scripts.enter(Sandbox.canonical(path), path: path, at: 0..<0)
    defer { scripts.leave() }
    return await run(source, bail: bail)
  }
}

/// A statement failed and has said why itself.
///
/// So it is for a sourced script that reported its own errors, and a batch `check` found UIKit
/// refuses (its report is the answer). The statement fails (a script exits 1) with nothing
/// more printed.
struct AlreadyReported: Error {}

/// Reads script files, with the engine's file errors.
enum ScriptFiles {
  static func read(_ path: String, displayPath: String) throws -> String {
    try RegularFile.readText(atPath: path, displayPath: displayPath)
  }
}
