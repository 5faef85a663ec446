import DataSourceKit
import Foundation

/// A CSV file's rows a chunk at a time (``CSVReader/chunks(fileAt:displayPath:delimiter:options:progress:access:chunkBytes:)``):
/// each chunk's rows a table of their own, typed as if they were the whole file.
package final class CSVChunks {
  private let load: CSVLoad

  init(_ load: CSVLoad) { self.load = load }

  /// The next chunk's rows and the file's row number of its first (from 0), or `nil` after the last.
  ///
  /// Errors name the file's line, as a whole read's do. Once ``readAhead()`` has started, the
  /// chunks come from the thread reading ahead.
  package func next() throws -> (table: ColumnTable, firstRow: Int)? {
    guard let ahead else { return try load.nextChunk() }
    return try ahead.next()
  }

  private var ahead: ReadAhead?

  /// Reads the chunks after the ones taken so far on a thread of its own, a chunk ahead of
  /// ``next()``: the file is read and typed while the caller works on the chunk before.
  ///
  /// A text column not named in `copied` is made where its fields lie, in one copy of each
  /// chunk's bytes, not copied field by field (a column the caller reads only a few rows of).
  package func readAhead(copying copied: Set<String>? = nil) {
    guard ahead == nil else { return }
    ahead = ReadAhead(load, copying: copied)
  }

  /// Stops reading ahead (the caller needs no more chunks); the chunk being read is finished
  /// and let go.
  package func stop() { ahead?.stop() }

  deinit { ahead?.stop() }

  /// A thread that reads chunks while the caller works, at most two ahead.
  ///
  /// `@unchecked Sendable`: the load is used by the thread alone once it starts; the chunks
  /// made are handed over under the condition's lock.
  private final class ReadAhead: @unchecked Sendable {
    private let condition = NSCondition()
    private var ready: [Result<(table: ColumnTable, firstRow: Int)?, any Error>] = []
    private var stopped = false
    private let load: CSVLoad
    private let copied: Set<String>?

    init(_ load: CSVLoad, copying copied: Set<String>?) {
      self.load = load
      self.copied = copied
      let thread = Thread { [self] in
        while true {
          condition.lock()
          while ready.count >= 2 && !stopped { condition.wait() }
          let stop = stopped
          condition.unlock()
          if stop { return }
          let chunk = Result { try self.load.nextChunk(copying: self.copied) }
          condition.lock()
          ready.append(chunk)
          condition.broadcast()
          condition.unlock()
          // The end of the file, or an error: nothing more to read.
          if case .success(let made) = chunk, made != nil { continue }
          return
        }
      }
      thread.start()
    }

    func next() throws -> (table: ColumnTable, firstRow: Int)? {
      condition.lock()
      defer { condition.unlock() }
      while ready.isEmpty { condition.wait() }
      let chunk = ready[0]
      // The end, or an error, stays: asked again, the same answer.
      if case .success(let made) = chunk, made != nil {
        ready.removeFirst()
        condition.broadcast()
      }
      return try chunk.get()
    }

    func stop() {
      condition.lock()
      stopped = true
      condition.broadcast()
      condition.unlock()
    }
  }
}

/// The header and first rows of a CSV file (``CSVReader/sample(fileAt:displayPath:delimiter:options:access:bytes:)``).
package struct CSVSample: Sendable {
  /// The rows read, typed.
  package var table: ColumnTable
  /// Whether they are every row of the file.
  package var isWhole: Bool
  /// The file's size.
  package var fileBytes: Int
  /// The file's rows, estimated from the bytes the sample's rows took: exact when `isWhole`.
  package var estimatedRows: Int
}
