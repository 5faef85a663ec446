import DataSourceKit
import DataSourceKitFiles
import DataSourceKitHTTP
import DataSourceKitValues
import Foundation

// A `show` of a few rows of a view over a large CSV file that nothing else holds: the file is
// read a chunk at a time and only the view's first and last rows are kept (`StreamedRows`),
// where the road every other statement takes holds every column of the file.
extension RowSlice {
  /// This run of the rows, then `next` run of what it keeps: one run.
  func then(_ next: RowSlice) -> RowSlice {
    let left = count.map { max(0, $0 - next.offset) }
    let counts = [left, next.count].compactMap { $0 }
    let (skipped, past) = offset.addingReportingOverflow(next.offset)
    return RowSlice(offset: past ? .max : skipped, count: counts.min())
  }
}

extension Evaluator {
  /// Files at most this long are read whole: the columns cost little, and the road is the one
  /// every other statement takes.
  static let streamedBytes = 16 << 20
  /// The most rows a stream keeps from each chunk: the view's first and last rows asked for.
  static let streamedRows = 4_096

  /// The view `expression` makes, holding only its first and last rows `ends` asks for (every
  /// row when `nil`: then the view must end in a `limit`) and its sections' counts, when it is
  /// a CSV file longer than ``streamedBytes``, alone or under `where`, `sort by`, `section by`
  /// and a last `limit`; `nil` otherwise, and when the file's columns change type past its first
  /// chunk (a text among numbers, a marker), which only the whole file's types answer: then the
  /// statement takes the usual road.
  ///
  /// The stages are checked as they would be over the whole file, against the header first.
  ///
  /// - Parameter fallback: why a stream begun went back to the usual road, for `set stats on`.
  func streamedView(of expression: Expression, ends: (front: Int, back: Int)?, fallback: inout String?)
    async throws -> ScriptValue?
  {
    let (head, written): (Expression, [PipelineStep]) =
      switch expression {
      case .pipeline(let head, let steps, _): (head, steps)
      default: (expression, [])
      }
    var steps = written
    guard case .provider(let literal) = head, case .csv(let path) = literal.source, !HTTPFile.isURL(path)
    else { return nil }
    // A last `select` of fields (`show X columns a, b`) picks from the rows kept: it is put over
    // the streamed view, as it would be over the whole one.
    var picked: [Stage] = []
    while case .stage(let stage) = steps.last, case .select(let fields, _) = stage,
      fields.allSatisfy({ if case .field = $0.expression { true } else { false } })
    {
      picked.insert(stage, at: 0)
      steps.removeLast()
    }
    let stages = steps.compactMap { step -> Stage? in
      switch step {
      case .stage(let stage): stage.kind.arrangesRows ? stage : nil
      default: nil
      }
    }
    guard stages.count == steps.count else { return nil }
    if let ends, ends.front + ends.back > Self.streamedRows || ends.front + ends.back == 0 { return nil }
    if ends == nil {
      // Every row: only a view that ends in a limit has few.
      guard case .slice = stages.last else { return nil }
    }
    // A file read whole anyway is not sampled twice.
    guard let size = FileBytes.size(atPath: resolve(path)), size > Self.streamedBytes
    else { return nil }
    // A misspelt field is found from the header, before the file is read, as it is otherwise.
    let checkedSteps = steps + picked.map { PipelineStep.stage($0) }
    if !checkedSteps.isEmpty { _ = try await checkedOverFirstRows(head, checkedSteps, sampleBytes: 64 << 10) }
    guard let source = try await sampledSource(literal, bytes: 64 << 10),
      let csv = (source.provider as? EditableProvider<Value>)?.source as? CSVProvider ?? source.provider
        as? CSVProvider
    else { return nil }
    /// A failure to read the file, placed at the source as a whole read's is.
    func reading<T>(_ body: () throws -> T) throws -> T {
      do {
        return try body()
      } catch DataSourceError.cancelled {
        throw Diagnostic(.interrupted, at: literal.range)
      } catch let error as DataSourceError {
        throw Diagnostic(.dataSource(error), at: literal.argumentRange)
      }
    }
    guard let chunks = try reading({ try csv.chunks(ifLongerThan: Self.streamedBytes) }),
      let first = try reading({ try chunks.next() })
    else { return nil }

    // The stages checked against the first chunk's columns, whose types every later chunk must
    // share; a stage the whole file would refuse is left to the usual road to refuse.
    let checked = ProviderValue(
      provider: ColumnTableProvider(first.table), displayName: source.displayName, key: nil,
      sourceKind: source.sourceKind)
    var engine: [PushdownStage] = []
    var slice: RowSlice?
    var sliceRange: SourceRange?
    do {
      for stage in stages {
        guard let made = try pushdownStage(stage, of: checked) else { return nil }
        if case .slice(let run) = made {
          // `offset 30 | limit 4` is one run of the rows: the slices are the view's last stages.
          slice = slice.map { $0.then(run) } ?? run
          sliceRange = (sliceRange?.lowerBound ?? stage.range.lowerBound)..<stage.range.upperBound
        } else {
          guard slice == nil else { return nil }
          engine.append(made)
        }
      }
    } catch is Diagnostic {
      return nil
    }
    guard StreamedRows.runsByChunks(engine) else { return nil }
    var (front, back) = ends ?? (0, 0)
    if let slice {
      // The view's rows are the run's: all among the first offset + count of the whole.
      guard let count = slice.count, count <= Self.streamedRows, slice.offset <= Self.streamedRows - count
      else { return nil }
      (front, back) = (slice.offset + count, 0)
    }

    // Notes are told only when the stream is the answer: otherwise the usual road counts them.
    let streamNotes = ExpressionNotes()
    let rows = StreamedRows(stages: engine, front: front, back: back, notes: streamNotes)
    // The next chunks are read and typed while the stages run over the one before.
    // Text columns no stage reads are read only for the rows kept: left where they lie.
    let read = engine.flatMap { stage -> [RowExpression] in
      switch stage {
      case .filter(let condition): [condition]
      case .sort(let terms): terms.map(\.expression)
      case .section(let term): [term.expression]
      case .slice: []
      }
    }
    chunks.readAhead(copying: Set(read.flatMap { $0.fieldPaths.compactMap(\.first) }))
    defer { chunks.stop() }
    var chunk: (table: ColumnTable, firstRow: Int)? = first
    while let (table, firstRow) = chunk {
      if Task.isCancelled { throw Diagnostic(.interrupted, at: literal.range) }
      if let reason = try await rows.add(table, firstRow: firstRow) {
        fallback = reason
        return nil
      }
      chunk = try reading { try chunks.next() }
    }
    var view: any DataProvider<Value> = try await rows.view()
    if let slice {
      let sliced = DerivedProvider<Value>.sliced(view, label: sliceRange.map(text) ?? "", slice)
      try await sliced.load()
      view = sliced
    }
    for (note, count) in streamNotes.take() { notes.collector.add(note, times: count) }
    notes.markers(in: view, source: literal)
    var value = ScriptValue.provider(
      ProviderValue(provider: view, displayName: source.displayName, key: nil, sourceKind: source.sourceKind))
    for stage in picked { value = try await apply(stage, to: value, reading: true) }
    return value
  }
}
