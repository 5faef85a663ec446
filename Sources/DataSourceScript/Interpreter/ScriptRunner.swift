import DataSourceKit
import Foundation

/// The script a session is running, and the scripts that sourced it: `source` refuses cycles
/// and runaway nesting.
@MainActor
final class ScriptRunner {
  /// The script of the statement running now: statements slice their text out of it.
  var current = SourceFile(name: nil, text: "")
  /// Scripts being sourced, innermost last (canonical paths).
  private var stack: [String] = []
  static let maximumDepth = 64

  /// Enters a sourced script, unless it is already being sourced or nesting is too deep.
  func enter(_ canonical: String, path: String, at range: SourceRange) throws(Diagnostic) {
    if stack.contains(canonical) { throw Diagnostic(.sourceCycle(path: path), at: range) }
    if stack.count >= Self.maximumDepth {
      throw Diagnostic(.sourceDepth(limit: Self.maximumDepth), at: range)
    }
    stack.append(canonical)
  }

  func leave() { stack.removeLast() }
}

extension Session {
  /// `source "PATH"`: runs another script in this session.
  func source(_ path: String, pathRange: SourceRange) async throws {
    if environment.sandbox != nil {
      throw Diagnostic(.refusedBySafeMode(.sourcing(path: path)), at: pathRange)
    }
    let resolved = resolve(path)
    let canonical = URL(fileURLWithPath: resolved).standardizedFileURL.resolvingSymlinksInPath().path
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
    if !(await run(SourceFile(name: path, text: text, directory: folder))) { throw NestedScriptFailure() }
  }
}

/// A sourced script failed; it has reported its own errors already.
struct NestedScriptFailure: Error {}

/// Reads script files, with the engine's file errors.
enum ScriptFiles {
  static func read(_ path: String, displayPath: String) throws -> String {
    try RegularFile.readText(atPath: path, displayPath: displayPath)
  }
}
