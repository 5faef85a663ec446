import ArgumentParser
import CLibCurl
import DataSourceKit
import DataSourceKitHTTP
import DataSourceKitPostgres
import DataSourceKitValues
import DataSourceScript
import Foundation

/// The `dsh` command: runs scripts and `-c` statements, reads a piped script from standard
/// input, or starts the interactive shell.
@main
struct DSH: AsyncParsableCommand {
  static let version = "0.1.0"

  static let configuration = CommandConfiguration(
    commandName: "dsh",
    abstract: "A shell for composing data sources: providers, presenters, decorators, sectioned views.",
    discussion: """
      With no scripts and no -c, dsh reads statements from standard input: interactively with line \
      editing on a terminal, as a script otherwise. Scripts run first, then each -c in order. Exit \
      status is 1 when any statement failed.

      Inside dsh, help lists the commands, stages and functions, and help NAME explains one with \
      examples that run (help browse, help sql for SQL's words in dsh's). The whole language is \
      docs/LANGUAGE.md in dsh's source tree.
      """,
    version: version)

  @Argument(
    help:
      "Scripts to run, in order ('-' reads one from standard input), or data files to open (.csv .tsv .tab .json .jsonl .ndjson .parquet .db .sqlite .sqlite3, a text file compressed as .gz .bz2 .zst or .zip, or a CSV or JSON file's URL): each is bound under its file's name (a database's tables and views under theirs; one that cannot be read is named with the line that opens it) and shown when nothing else runs, browsed on a terminal; with -c or statements piped in, only those print.",
    completion: .file(extensions: ["dsh"] + DataFileArgument.extensions))
  var scripts: [String] = []

  @Option(name: .customShort("c"), help: ArgumentHelp("Run a statement (repeatable).", valueName: "text"))
  var commands: [String] = []

  @Option(
    name: .customLong("null"),
    help: ArgumentHelp(
      "Read this text as null in the data files opened (as csv FILE null \"NA\"; repeatable).",
      valueName: "text"))
  var nullMarkers: [String] = []

  @Flag(help: "Stop at the first statement that fails.")
  var bail = false

  @Flag(help: "Print each statement before its output, after the prompt (as 'set echo on').")
  var echo = false

  @Flag(name: .customShort("i"), help: "Go on interactively after the scripts and commands.")
  var interactive = false

  @Flag(
    help:
      "Write no file, use no network, source no other script, and read only files named here or below the working directory."
  )
  var safe = false

  /// The null marker that would have let a table open, when `diagnostic` is a value of the
  /// wrong type that reads as one (`"NA"` in an INTEGER column).
  static func nullMarker(in diagnostic: Diagnostic?) -> String? {
    guard case .dataSource(.read(let failure))? = diagnostic?.message else { return nil }
    return (failure as? ReadError)?.suggestedNullMarker
  }

  /// A script named on the command line, or `nil` after saying why it cannot be read.
  ///
  /// The reasons are the data sources' words: no such file, a folder, a device, not UTF-8. A
  /// pipe is read: it was named on purpose, as `dsh <(generate-script)` does.
  static func readScript(_ path: String) -> String? {
    do {
      return try RegularFile.readText(atPath: path, displayPath: path)
    } catch DataSourceError.read(ReadError.notRegularFile) where FileManager.default.isPipe(atPath: path) {
      if let handle = FileHandle(forReadingAtPath: path), let data = try? handle.readToEnd() {
        return String(decoding: data, as: UTF8.self)
      }
      StandardOutput.write("dsh: error: cannot read '\(path)'\n", to: STDERR_FILENO)
    } catch {
      StandardOutput.write("dsh: error: \(TextWidth.escapedForTerminal("\(error)"))\n", to: STDERR_FILENO)
    }
    return nil
  }

  /// ArgumentParser's `main` (parse, run, exit with the error's status), but a command line of
  /// statements alone (`dsh -c TEXT`, as a script runs dsh hundreds of times) is taken as it
  /// is: parsing it costs a millisecond of a start of five, most of it spent making sure no
  /// completion script was asked for.
  static func main() async {
    keepFreedBlocks()
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard let invocation = Invocation(statementsOnly: arguments) else {
      await main(arguments)
      return
    }
    do {
      try await invocation.run()
    } catch let code as ExitCode {
      Foundation.exit(code.rawValue)
    } catch {
      exit(withError: error)
    }
  }

  /// Lets glibc's allocator reuse the blocks a pass makes and lets go of, rather than mapping
  /// them afresh each time.
  ///
  /// glibc serves an allocation over its mmap threshold (128 KB at first, raised as such blocks
  /// are freed, not always) with a mapping of its own and unmaps it when freed: a Parquet row
  /// group's columns, about a megabyte each, made and let go for each of a file's row groups,
  /// then faulted their pages in again every time (62,000 faults and a third of a 10M-row group
  /// by's time; 2,600 with this). Below 4 MB a block now comes from the heap and is reused, and
  /// up to 64 MB freed at the heap's top is kept for the next.
  private static func keepFreedBlocks() {
    #if canImport(Glibc)
      // mallopt is declared in <malloc.h>, which the Glibc module leaves out: looked up by name.
      // Its options, as <malloc.h> numbers them: M_TRIM_THRESHOLD -1, M_MMAP_THRESHOLD -3.
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
      let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
      _ = mallopt(-3, 4 << 20)
      _ = mallopt(-1, 64 << 20)
    #endif
  }

  func run() async throws {
    var invocation = Invocation(
      scripts: scripts, commands: commands, bail: bail, echo: echo, interactive: interactive, safe: safe)
    invocation.nullMarkers = nullMarkers
    try await invocation.run()
  }
}

/// What one run of dsh was asked to do, the command line read: scripts and data files, `-c`
/// statements, and the flags.
struct Invocation {
  var scripts: [String] = []
  var commands: [String] = []
  var bail = false
  var echo = false
  var interactive = false
  var safe = false
  /// `--null TEXT`: read as null in the data files opened.
  var nullMarkers: [String] = []

  init(scripts: [String], commands: [String], bail: Bool, echo: Bool, interactive: Bool, safe: Bool) {
    self.scripts = scripts
    self.commands = commands
    self.bail = bail
    self.echo = echo
    self.interactive = interactive
    self.safe = safe
  }

  /// The statements of a command line that holds `-c TEXT` pairs and nothing else, or `nil`.
  ///
  /// A text that starts with `-` is left to the parser, which reads it as an option.
  init?(statementsOnly arguments: [String]) {
    guard !arguments.isEmpty, arguments.count.isMultiple(of: 2) else { return nil }
    for pair in stride(from: 0, to: arguments.count, by: 2) {
      guard arguments[pair] == "-c", !arguments[pair + 1].hasPrefix("-") else { return nil }
      commands.append(arguments[pair + 1])
    }
  }

  func run() async throws {
    // libcurl, which URLSession calls, is opened when the web is first read (CLibCurl).
    HTTPProvider.transportProblem.withLock { check in
      check = {
        dsh_libcurl_open().map {
          "reading from the web needs libcurl (Debian's libcurl4), which could not be opened: "
            + String(cString: $0)
        }
      }
    }
    try await runShell()
  }

  /// The shell itself, on the main actor with its session.
  @MainActor
  private func runShell() async throws {
    Terminal.installSignalHandlers()
    let interactiveInput = Terminal.inputIsTerminal
    // Scripts, -c and piped input are batch: their output is whole and plain, and depends on the
    // terminal only for its width, when it goes to one (as DuckDB's -c draws to the screen).
    var batch = Environment.batch
    batch.terminalWidth = { Terminal.width() ?? Terminal.columnsVariable }
    if safe {
      batch.sandbox = Sandbox(allowedFiles: scripts, allowedFolder: FileManager.default.currentDirectoryPath)
    }
    // TERM=dumb: no escape codes (colour, progress line) and no line editing.
    let dumbTerminal = Terminal.variable("TERM") == "dumb"
    let session = Session(
      environment: batch, output: StandardOutput(erasesProgress: interactiveInput && !dumbTerminal))
    // A server's notice is data (a view another user wrote raises it): every character a
    // terminal would obey is shown escaped, dsh's own colour codes included.
    PostgresNotices.deliver { notice in
      let severity = notice.severity.lowercased() == "warning" ? "warning" : "note"
      let text =
        "\(severity): \(notice.server): \(notice.severity == "warning" ? "" : notice.severity + ": ")\(notice.message)"
      StandardOutput.write(TextWidth.escapedForTerminal(text) + "\n", to: STDERR_FILENO)
    }
    session.settings.echo = echo
    session.startingSettings = session.settings
    var succeeded = true

    let workingDirectory = FileManager.default.currentDirectoryPath
    // Data files named as arguments are bound as they are opened, and shown when there is
    // nothing else to run: on a terminal the last is browsed and the prompt follows; with -c only
    // the commands print (as `duckdb FILE -c …`); with statements piped in they print, and the
    // files are shown only when none came.
    let onlyDataFiles = !scripts.isEmpty && scripts.allSatisfy { (try? DataFileArgument(path: $0)) != nil }
    let browsesOpened =
      interactiveInput && Terminal.outputIsTerminal && !dumbTerminal && commands.isEmpty && onlyDataFiles
    // As sqlite3 and DuckDB's CLI read statements piped to them after opening a file.
    let readsPipeAfterOpening = !interactiveInput && commands.isEmpty && onlyDataFiles
    // Shown when nothing else runs: a script named beside it (`dsh penguins.csv q.dsh`, or `-`)
    // prints its own answers alone.
    let showsAsOpened = commands.isEmpty && onlyDataFiles && !browsesOpened && !readsPipeAfterOpening
    // What `csv "-"` may read: data piped in, unless standard input is the terminal or holds the
    // statements (named as a script, `-`, or read for them when nothing else says what to run).
    session.environment.standardInput =
      interactiveInput
      ? .terminal
      : scripts.contains("-") || (commands.isEmpty && (scripts.isEmpty || onlyDataFiles))
        ? .statements : .data
    var opened: DataFileArgument?
    var openedFiles: [DataFileArgument] = []
    // Shows a file opened, and the names a database's tables are bound under.
    func show(_ dataFile: DataFileArgument) async -> Bool {
      let shown = await session.run(SourceFile(name: "(opening)", text: dataFile.showing), bail: bail)
      if let first = dataFile.tableNames.first {
        StandardOutput.write(
          "bound: \(dataFile.tableNames.joined(separator: ", ")) (show \(first), describe \(first))\n",
          to: STDOUT_FILENO)
      }
      return shown
    }
    for script in scripts where !session.quitRequested {
      let dataFile: DataFileArgument?
      do {
        dataFile = try DataFileArgument(path: script, nullMarkers: nullMarkers)
      } catch {
        StandardOutput.write("\(error)\n", to: STDERR_FILENO)
        succeeded = false
        if bail { throw ExitCode(1) }
        continue
      }
      if var dataFile {
        // Two files of one stem (`dsh g.csv g.json`): the later is bound under a name of its
        // own, and told, rather than binding `g` again over the first.
        for (was, now) in dataFile.rename(avoiding: Set(session.boundNames)) {
          StandardOutput.write(
            "note: \(Secrets.redacted(script)): bound as \(now), since \(was) names another file\n",
            to: STDERR_FILENO)
        }
        // Each table alone: one a marker breaks ('NA' in an INTEGER column, as sqlite3's .import
        // leaves it) is reported with the line that opens it, and the others are bound.
        var bound: [String] = []
        for binding in dataFile.bindings {
          let opening = SourceFile(name: "(opening \(Secrets.redacted(script)))", text: binding.statement)
          session.opensCommandLineFiles = true
          let opened = await session.run(opening, bail: true)
          session.opensCommandLineFiles = false
          if opened {
            bound.append(binding.name)
            continue
          }
          succeeded = false
          if let marker = DSH.nullMarker(in: session.lastReported) {
            StandardOutput.write(
              "note: \(binding.name) is not bound; it opens with: \(binding.statement) null \(DataFileArgument.quoted(marker))\n",
              to: STDERR_FILENO)
          }
        }
        if bound.isEmpty && !dataFile.bindings.isEmpty {
          if bail { throw ExitCode(1) }
          continue
        }
        dataFile.tableNames = dataFile.tableNames.filter(bound.contains)
        openedFiles.append(dataFile)
        // A database is described as it opens unless -c says what to do.
        if showsAsOpened || (dataFile.name == nil && commands.isEmpty && !readsPipeAfterOpening) {
          if !(await show(dataFile)) {
            succeeded = false
            if bail { throw ExitCode(1) }
          }
        }
        opened = dataFile
        continue
      }
      if script == "-" {
        if !(await PipedInput.run(session, name: "<stdin>", bail: bail)) {
          succeeded = false
          if bail { throw ExitCode(1) }
        }
        continue
      }
      guard let text = DSH.readScript(script) else {
        succeeded = false
        if bail { throw ExitCode(1) }
        continue
      }
      let source = SourceFile.script(named: script, text: text, workingDirectory: workingDirectory)
      if !(await session.runScript(source, path: script, bail: bail)) {
        succeeded = false
        if bail { throw ExitCode(1) }
      }
    }
    for (index, command) in commands.enumerated() where !session.quitRequested {
      // Errors name the -c they are in: "-c" alone, "-c#2" when there are several.
      let name = commands.count == 1 ? "-c" : "-c#\(index + 1)"
      if !(await session.run(SourceFile(name: name, text: command), bail: bail)) {
        succeeded = false
        if bail { throw ExitCode(1) }
      }
    }

    let ranSomething = ((!scripts.isEmpty && !browsesOpened) || !commands.isEmpty) && !readsPipeAfterOpening
    var prompted = false
    if !session.quitRequested && (interactive || !ranSomething) {
      if interactiveInput {
        prompted = true
        var terminal = Environment(
          isTerminal: Terminal.outputIsTerminal,
          terminalWidth: { Terminal.width() ?? Terminal.columnsVariable },
          noColor: !(Terminal.variable("NO_COLOR") ?? "").isEmpty || dumbTerminal)
        terminal.sandbox = session.environment.sandbox
        terminal.standardInput = .terminal
        // browse draws full screen on a terminal that can (not TERM=dumb, not a pipe).
        if Terminal.outputIsTerminal && !dumbTerminal {
          terminal.browser = { await FullScreen.browse($0) }
          terminal.pager = { Pager.show($0) }
        }
        session.environment = terminal
        if browsesOpened, let name = opened?.name {
          // As VisiData opens a file: on the screen first, then the prompt with it bound.
          await session.run(SourceFile(name: "(opening)", text: "browse \(name)"))
          StandardOutput.write(
            "\(name) is bound: show \(name), describe \(name), help for more\n",
            to: STDOUT_FILENO)
        }
        if !(await REPL(session: session, lineEditing: !dumbTerminal).run()) { succeeded = false }
      } else if !scripts.contains("-") {
        // A pipe or a file: statements run as they arrive.
        let statementsBefore = session.statementSerial
        if !(await PipedInput.run(session, name: "<stdin>", bail: bail)) { succeeded = false }
        // Files opened with nothing piped after them: shown, as a terminal would have them.
        if readsPipeAfterOpening, session.statementSerial == statementsBefore {
          for dataFile in openedFiles where !session.quitRequested {
            if !(await show(dataFile)) { succeeded = false }
          }
        }
      }
    }
    if session.isServing {
      if !prompted && !session.quitRequested {
        // As `python -m http.server`: the pages stay live until the user stops dsh, by the
        // signals the line below names, even where the parent had them ignored (as `nohup`
        // and some process managers leave them): nothing else would end the wait.
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        FileHandle.standardError.write(
          Data("dsh: still serving after the last statement; press ^C (or send SIGTERM) to stop\n".utf8))
        // The pages' requests are answered here until then.
        while true { _ = IdleWork.shared.waitForInput(on: -1) }
      }
      await session.stopServingAll()
    }
    if !succeeded { throw ExitCode(1) }
  }
}

extension FileManager {
  /// Whether `path` is a FIFO or a pipe (`/dev/fd/N` of a process substitution).
  fileprivate func isPipe(atPath path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO
  }
}
