import DataSourceKit
import DataSourceKitFiles
import DataSourceKitHTTP
import DataSourceKitPostgres
import DataSourceKitSQLite
import DataSourceKitValues
import Foundation

// A source expression made a provider: its options read, a file fetched from a URL or standard
// input, `--safe`'s limits checked; and a large file's plan checked over its first rows before
// it is read.

extension Evaluator {
  /// A provider as written, loaded; `pageSize` is set when it is the source of `paged`.
  ///
  /// With `sampleBytes`, a CSV file is not read whole: only its header and the rows in its first
  /// bytes, to check a statement against (``sampledSource(_:bytes:)``).
  func makeProvider(
    _ expression: ProviderExpression, pageSize: Int? = nil, counting: Bool = true, sampleBytes: Int? = nil
  )
    async throws
    -> ProviderValue
  {
    let options = expression.options
    let readOptions = options.readOptions
    try checkSandbox(expression)
    let provider: any DataProvider<Value>
    switch expression.source {
    case .array(let items):
      provider = ArrayProvider(
        items, knownFields: Value.unionOfFields(items), label: "array")
    case .range(let lower, let upper):
      provider = MapProvider(RangeProvider(lower..<upper)) { Value.int($0) }
    case .csv(let path):
      let fetched = try await fetchedFile(path, expression)
      provider = CSVProvider(
        path: fetched?.path ?? resolve(path), displayPath: path,
        delimiter: options.delimiter, header: options.hasHeader,
        skip: options.skippedLines,
        member: options.member,
        inflatedLimit: options.maxsizeMegabytes.map { $0 << 20 },
        options: readOptions,
        progress: progress,
        access: fetched == nil ? environment.sandbox?.fileAccess : nil)
      if let fetched { fetchedFiles.keep(fetched, while: provider) }
    case .json(let path):
      let fetched = try await fetchedFile(path, expression)
      provider = JSONProvider(
        path: fetched?.path ?? resolve(path), displayPath: path, at: options.at ?? [], member: options.member,
        inflatedLimit: options.maxsizeMegabytes.map { $0 << 20 },
        options: readOptions,
        progress: progress,
        access: fetched == nil ? environment.sandbox?.fileAccess : nil)
      if let fetched { fetchedFiles.keep(fetched, while: provider) }
    case .parquet(let path):
      let fetched = try await fetchedFile(path, expression)
      provider = ParquetProvider(
        path: fetched?.path ?? resolve(path), displayPath: path,
        access: fetched == nil ? environment.sandbox?.fileAccess : nil)
      if let fetched { fetchedFiles.keep(fetched, while: provider) }
    case .http(let url):
      let isTemplate = HTTPProvider.isPageTemplate(url)
      if isTemplate && pageSize == nil {
        throw Diagnostic(.pageTemplateWithoutPaged(url: url), at: expression.argumentRange)
      }
      let limits = HTTPProvider.Limits(
        timeout: Double(options.timeoutSeconds ?? 10),
        maximumBytes: options.maxsizeMegabytes.map { $0 << 20 } ?? HTTPProvider.Limits.defaultMaximumBytes,
        followsRedirectsToOtherHosts: options.redirectsToAnyHost)
      provider = HTTPProvider(
        url: url, at: options.at ?? [], pageSize: isTemplate ? pageSize : nil, limits: limits,
        identityKey: options.key, options: readOptions, progress: progress)
    case .sqlite(let path, nil, nil):
      // The database itself is no provider: say what it holds, and how to open a table of it.
      let tables: [SQLiteTableSummary]
      do {
        tables = try SQLiteProvider.contents(
          ofDatabaseAt: resolve(path), displayPath: path, access: environment.sandbox?.fileAccess)
      } catch let error as DataSourceError {
        throw Diagnostic(.dataSource(error), at: expression.argumentRange)
      }
      throw Diagnostic(
        .databaseWithoutTable(source: "sqlite", path: path, tables: tables.map(\.name)), at: expression.range)
    case .postgres(let url, nil, nil):
      let tables: [PostgresTableSummary]
      do {
        tables = try await PostgresProvider.contents(
          ofDatabaseAt: url, statementTimeout: options.timeoutSeconds.map(Double.init))
      } catch let error as DataSourceError {
        throw Diagnostic(.dataSource(error), at: expression.argumentRange)
      }
      throw Diagnostic(
        .databaseWithoutTable(source: "postgres", path: Secrets.redacted(url), tables: tables.map(\.name)),
        at: expression.range
      )
    case .sqlite(let path, let table, let query):
      let source: SQLiteQuery.Source = table.map { .table($0) } ?? .query(query ?? "")
      provider = SQLiteProvider(
        path: resolve(path), displayPath: path, query: SQLiteQuery(source: source),
        identityKey: options.key, options: readOptions, access: environment.sandbox?.fileAccess)
    case .postgres(let url, let table, let query):
      do {
        provider = try PostgresProvider(
          url: url, source: table.map { .table($0) } ?? .query(query ?? ""), identityKey: options.key,
          options: readOptions, statementTimeout: options.timeoutSeconds.map(Double.init))
      } catch let error as DataSourceError {
        throw Diagnostic(.dataSource(error), at: expression.argumentRange)
      }
    }
    var sampled = false
    do {
      if let sampleBytes, let csv = provider as? CSVProvider, try csv.sampleFirstRows(bytes: sampleBytes) {
        sampled = true
      } else if !counting, let prepared = provider as? any PreparedLoading {
        try await prepared.prepare()
      } else {
        try await provider.load()
      }
    } catch let error as DataSourceError {
      throw Diagnostic(.dataSource(error), at: expression.argumentRange)
    }
    // A sample is checked against, never shown: its markers are told when the file is read.
    if !sampled { notes.markers(in: provider, source: expression, written: text(expression.range)) }
    // Errors name the provider by its source as written, without its options (or a password).
    let name = Secrets.redacted(
      text(
        expression.range.lowerBound..<max(expression.range.lowerBound, expression.argumentRange.upperBound)))
    var value = ProviderValue(
      provider: provider, displayName: name, key: nil, sourceKind: expression.source.kind)
    if let key = options.key, let keyRange = options.valueRange(of: .key) {
      try checkField(FieldPath(components: [key], range: keyRange), in: value)
      value.key = key
    }
    // In-memory sources are editable (insert, delete, update, move); edits reach every view.
    // A store read lazily (a database) is never written, and a source that fetches its own
    // pages keeps its items itself.
    if !(provider is any ReadOnlyStore || provider is any PagingProvider) {
      value.provider = EditableProvider(provider, identityKey: value.key)
    }
    return value
  }

  /// A CSV file as written, with only its header and the rows of its first `bytes` read
  /// (``CSVProvider/sampleFirstRows(bytes:)``); `nil` for any other source, or a file too small
  /// or compressed to be worth sampling.
  func sampledSource(_ expression: ProviderExpression, bytes: Int) async throws -> ProviderValue? {
    guard case .csv(let path) = expression.source, !HTTPFile.isURL(path) else { return nil }
    try checkSandbox(expression)
    guard CSVProvider.canSample(resolve(path), member: expression.options.member) else { return nil }
    let sampled = try await makeProvider(expression, sampleBytes: bytes)
    if samplesTextTypesOnly {
      // (The file's provider, under the editable layer every file source has.)
      let file = (sampled.provider as? EditableProvider<Value>)?.source ?? sampled.provider
      (file as? CSVProvider)?.keepOnlyTextTypes()
    }
    return sampled
  }

  /// What `explain` shows of a CSV file, or of a pipeline over one whose every step is checked
  /// against the file's header and first megabyte, without reading the file; `nil` otherwise
  /// (then the plan is made over the file read whole).
  ///
  /// A CSV file joined in (`join csv "other.csv" …`) is read to its first rows too
  /// (``joinedFileSample``); a source joined by its name is bound already.
  func planFromFirstRows(_ expression: Expression) async throws -> ScriptValue? {
    switch expression {
    case .provider(let literal):
      return try await sampledSource(literal, bytes: CSVProvider.sampleBytes).map { .provider($0) }
    case .pipeline(let head, let steps, _):
      return try await checkedOverFirstRows(head, steps, sampleBytes: CSVProvider.sampleBytes)
    default:
      return nil
    }
  }

  /// Checks a pipeline over a CSV file against the file's header and first rows, before the file
  /// is read whole, as DuckDB's binder does over its sniffer's sample: a misspelt field in the
  /// last stage is found in the time a header takes, not the file.
  ///
  /// Every stage is built and none runs: a `group by`, `distinct`, window or `sample` is built
  /// without its input's rows (its fields are its keys', aggregates' and windows' names, whatever
  /// the rows), and a join whose other side is a CSV file (sampled as the source is) or a
  /// bound name, up to the first step that needs more: a join with another source (it would be
  /// opened twice) or a decoration. Only a refusal the rest of the file cannot change is reported
  /// here: one the header decides (``isDecidedByTheHeader(_:)``), or one made again when only
  /// the columns the first rows type as text keep their types (text is the widest type; any
  /// other may still widen). Every other check is made again over the whole file.
  ///
  /// - Returns: the pipeline built over the file's header and first rows and not run, when every
  ///   step was checked (what `explain` shows without reading the file); `nil` otherwise.
  func checkedOverFirstRows(_ head: Expression, _ steps: [PipelineStep], sampleBytes: Int)
    async throws
    -> ScriptValue?
  {
    let checked = steps.prefix { step in
      switch step {
      // A join whose other side is a name (bound already), a list written in the statement, or
      // a plain CSV file on this machine (read to its first rows too when large, and cheap to
      // read again when small); any other source (compressed, from the web, a database) would
      // be read or opened twice, here and when the statement runs.
      case .stage(.join(let clause, _)):
        switch clause.other {
        case .name: true
        case .provider(let literal):
          switch literal.source {
          case .array, .range: true
          case .csv(let path):
            !HTTPFile.isURL(path) && CSVProvider.isPlainFile(resolve(path), member: literal.options.member)
          default: false
          }
        default: false
        }
      case .stage: true
      case .decoration: false
      }
    }
    guard case .provider(let literal) = head, !checked.isEmpty else { return nil }
    var sampling = self
    sampling.runsStages = false
    sampling.joinedFileSample = sampleBytes
    sampling.timings = nil
    // What the first rows' expressions notice (a division by zero) is not the statement's: the
    // file read whole, or nothing (explain), says it.
    sampling.notes = SessionNotes()
    // Nor is a seed `random()` draws as a window over them is built: `save` writes the one the
    // statement's own rows were drawn with.
    sampling.seeds = DrawnSeeds()
    /// Every stage is built and none runs: one that reads its input's rows (a grouping, a
    /// window, a sample) is built without them, its fields known from the header's.
    func built(over source: ProviderValue) async throws -> ScriptValue {
      var value = ScriptValue.provider(source)
      for case .stage(let stage) in checked {
        value = try await sampling.apply(stage, to: value, reading: false)
      }
      return value
    }
    func sampled() async -> ProviderValue? { try? await sampling.sampledSource(literal, bytes: sampleBytes) }
    guard let source = await sampled() else { return nil }
    do {
      let value = try await built(over: source)
      return checked.count == steps.count ? value : nil
    } catch let diagnostic as Diagnostic {
      if Self.isDecidedByTheHeader(diagnostic.message) { throw diagnostic }
      // Refused again with only the text columns of every file typed (`where state > 1`, state
      // text in the first rows): refused whatever the other rows hold.
      sampling.samplesTextTypesOnly = true
      guard let textOnly = await sampled() else { return nil }
      do {
        _ = try await built(over: textOnly)
      } catch let again as Diagnostic where again == diagnostic {
        throw diagnostic
      } catch {}
      return nil
    } catch {
      return nil
    }
  }

  /// Whether a refusal over a CSV file's first rows is the whole file's too.
  ///
  /// A field the header does not name is; so is one read from the plain values of `distinct x`,
  /// or a path into a field (`name.x`): a CSV field is never a record, whatever its type turns
  /// out to be. A type the first rows show may still widen (an int column with a text further
  /// on), so a comparison they refuse is left to the whole file.
  static func isDecidedByTheHeader(_ message: DiagnosticMessage) -> Bool {
    switch message {
    case .unknownField, .unknownFieldOneColumn, .fieldOfPlainItems, .pathIntoScalar: true
    default: false
    }
  }

  /// The file a `csv` or `json` URL names, fetched under the HTTP provider's limits (the
  /// expression's `timeout`, `maxsize` and `redirects`); `nil` for a path on this machine.
  private func fetchedFile(_ path: String, _ expression: ProviderExpression) async throws -> DownloadedFile? {
    if path == "-" { return try standardInputFile(expression) }
    guard HTTPFile.isURL(path) else { return nil }
    let options = expression.options
    let limits = HTTPProvider.Limits(
      timeout: Double(options.timeoutSeconds ?? 60),
      maximumBytes: options.maxsizeMegabytes.map { $0 << 20 } ?? HTTPProvider.Limits.defaultMaximumBytes,
      followsRedirectsToOtherHosts: options.redirectsToAnyHost)
    do {
      return try await DownloadedFile.fetch(path, limits: limits, progress: progress)
    } catch let error as DataSourceError {
      throw Diagnostic(.dataSource(error), at: expression.argumentRange)
    }
  }

  /// Standard input's copy, for a source named `"-"` (`cat f.csv | dsh -c 'show csv "-"'`),
  /// read to its end when first named; refused where it holds the statements or is a terminal.
  private func standardInputFile(_ expression: ProviderExpression) throws -> DownloadedFile {
    switch environment.standardInput {
    case .data:
      do {
        return try DownloadedFile.standardInput()
      } catch let error as DataSourceError {
        throw Diagnostic(.dataSource(error), at: expression.argumentRange)
      }
    case .statements, .terminal, .unavailable:
      throw Diagnostic(.standardInputNotData(environment.standardInput), at: expression.argumentRange)
    }
  }

  /// Under `--safe`: no network, and files only where the command line allowed.
  private func checkSandbox(_ expression: ProviderExpression) throws {
    guard let sandbox = environment.sandbox else { return }
    switch expression.source {
    case .http(let url):
      throw Diagnostic(.refusedBySafeMode(.network(source: "http", url: url)), at: expression.argumentRange)
    case .postgres(let url, _, _):
      throw Diagnostic(
        .refusedBySafeMode(.network(source: "postgres", url: url)), at: expression.argumentRange)
    case .csv(let path) where HTTPFile.isURL(path), .json(let path) where HTTPFile.isURL(path),
      .parquet(let path) where HTTPFile.isURL(path):
      let source = expression.source.kind.rawValue
      throw Diagnostic(.refusedBySafeMode(.network(source: source, url: path)), at: expression.argumentRange)
    case .csv("-"), .json("-"), .parquet("-"):
      // Standard input is what whoever ran dsh gave it, as a file named on the command line is.
      break
    case .csv(let path), .json(let path), .parquet(let path), .sqlite(let path, _, _):
      if !sandbox.allowsReading(resolve(path)) {
        throw Diagnostic(.refusedBySafeMode(.reading(path: path)), at: expression.argumentRange)
      }
    case .array, .range:
      break
    }
  }
}
