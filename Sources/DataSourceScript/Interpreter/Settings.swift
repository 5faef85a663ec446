import DataSourceKit
import DataSourceKitRendering
import DataSourceKitValues
import Foundation

/// What `set` changes.
///
/// `nil` means "decide from the terminal".
public struct Settings: Sendable {
  public enum ColorChoice: String, Sendable, CaseIterable {
    case auto, on, off
  }

  /// Light or dark mode, for pictures (`show X as html`).
  public enum Appearance: String, Sendable, CaseIterable {
    case light, dark
  }

  public var mode: RenderMode = .box
  public var width: Int?
  /// The widest a column of text is drawn in a table of fields (`set colwidth`); longer texts
  /// are cut.
  public var columnWidth: Int?
  public var maxRows: Int?
  public var color: ColorChoice = .auto
  public var timer = false
  /// Print what each `show` did: cells built and reused, rows counted.
  public var stats = false
  /// Print each statement of a script before its output, as the prompt would show it.
  public var echo = false
  /// The colours pictures are drawn in.
  public var appearance = Appearance.light
  /// The screen pictures are drawn for.
  public var device = Device.iPhone15

  public init() {}
}

/// What a process's standard input holds, for a source that reads it (`csv "-"`).
public enum StandardInput: Sendable, Equatable {
  /// Data piped in: a source may read it.
  case data
  /// The statements being run (`dsh < script.dsh`, `dsh file.csv -`).
  case statements
  /// The terminal the user types at.
  case terminal
  /// Nothing a source may read (a library's session).
  case unavailable
}

/// What the shell knows of where it runs: the session decides widths, row limits and colour from it.
public struct Environment: Sendable {
  /// Whether output goes to a terminal (then long views are shortened and colour is on by default).
  public var isTerminal: Bool
  /// The terminal's width now, when there is one.
  public var terminalWidth: @Sendable () -> Int?
  /// Whether `NO_COLOR` is set.
  public var noColor: Bool
  /// The directory `source` resolves relative paths in; `nil` for the process's.
  public var workingDirectory: String?
  /// `--safe`: what the session may touch.
  ///
  /// `nil` is everything.
  public var sandbox: Sandbox?
  /// What standard input holds: data a source may read (`csv "-"`), or what it may not be read
  /// for (the statements being run, a terminal).
  public var standardInput = StandardInput.unavailable
  /// The full screen `browse` takes over, when there is one (a terminal that is not `dumb`):
  /// it shows the screen and returns when the user leaves.
  public var browser: (@MainActor @Sendable (BrowseScreen) async -> Void)?
  /// Keeps a statement in the line editor's history, as if typed (`browse`'s keys write the
  /// statements of the views they open), when there is one.
  public var history: (@MainActor @Sendable (String) -> Void)?
  /// Shows text longer than the screen through a pager (`$PAGER`, else `less -R`), when there is
  /// a terminal; `false` when it could not, and the text is printed instead.
  public var pager: (@MainActor @Sendable (String) -> Bool)?

  public init(
    isTerminal: Bool = false, terminalWidth: @escaping @Sendable () -> Int? = { nil }, noColor: Bool = false,
    workingDirectory: String? = nil
  ) {
    self.isTerminal = isTerminal
    self.terminalWidth = terminalWidth
    self.noColor = noColor
    self.workingDirectory = workingDirectory
  }

  /// Batch mode: no terminal, so output never depends on one.
  public static let batch = Environment()

  /// A path as given, relative to the working directory; `samples:NAME` is a file of the
  /// bundled sample data.
  public func resolve(_ path: String) -> String {
    if let sample = SampleData.resolve(path) { return sample }
    guard !path.hasPrefix("/"), let workingDirectory else { return path }
    return workingDirectory + "/" + path
  }

  /// A path as written in `source`: relative to the script's folder when it is a script file,
  /// else to the working directory.
  public func resolve(_ path: String, in source: SourceFile) -> String {
    guard !path.hasPrefix("/"), !path.hasPrefix(SampleData.prefix), let folder = source.directory else {
      return resolve(path)
    }
    return folder + "/" + path
  }
}

/// What `--safe` allows: no file written, no network, no other script sourced, and files read only
/// when named on the command line or below the working directory.
///
/// It cannot be turned off from inside a script.
public struct Sandbox: Sendable {
  /// Files the command line named (as canonical paths).
  public var allowedFiles: Set<String>
  /// The folder below which files may be read (canonical), or `nil` for no files at all.
  public var allowedFolder: String?

  public init(allowedFiles: [String], allowedFolder: String?) {
    self.allowedFiles = Set(allowedFiles.map(Sandbox.canonical))
    self.allowedFolder = allowedFolder.map(Sandbox.canonical)
  }

  /// Whether a file may be read.
  public func allowsReading(_ path: String) -> Bool {
    let canonical = Sandbox.canonical(path)
    if allowedFiles.contains(canonical) { return true }
    guard let folder = allowedFolder else { return false }
    return canonical == folder || canonical.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/")
  }

  /// The real path, with links resolved by the kernel.
  ///
  /// Resolved one component at a time, `link/..` is the folder above the link's target, not the folder holding the link (removing `..` as text
  /// first let `sub/link/../../etc/passwd` out). A path that does not exist yet keeps its last
  /// components under its real existing folder.
  static func canonical(_ path: String) -> String {
    let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    if let real = realpath(absolute, nil) {
      defer { free(real) }
      return String(cString: real)
    }
    let parent = (absolute as NSString).deletingLastPathComponent
    guard parent != absolute, !parent.isEmpty else { return absolute }
    return (canonical(parent) as NSString).appendingPathComponent((absolute as NSString).lastPathComponent)
  }

  /// The check providers make on each file they open.
  public var fileAccess: FileAccess {
    let sandbox = self
    return FileAccess { real in sandbox.allowsReading(real) }
  }
}

/// The screens `set device` draws pictures for, by their width in points.
public enum Device: String, Sendable, CaseIterable {
  case iPhoneSE, iPhone15, iPad

  /// The width of the screen in points.
  public var width: Int {
    switch self {
    case .iPhoneSE: 375
    case .iPhone15: 393
    case .iPad: 820
    }
  }

  /// The name Apple gives it: `iPhone SE`.
  public var displayName: String {
    switch self {
    case .iPhoneSE: "iPhone SE"
    case .iPhone15: "iPhone 15"
    case .iPad: "iPad"
    }
  }

  /// A device by its name in any case, with or without spaces and dashes: `iPhone SE`,
  /// `iphone-se`, `iPhoneSE`.
  public init?(named name: String) {
    func folded(_ text: String) -> String {
      String(text.lowercased().filter { $0 != " " && $0 != "-" && $0 != "_" })
    }
    guard let device = Device.allCases.first(where: { folded($0.rawValue) == folded(name) }) else {
      return nil
    }
    self = device
  }
}

extension Settings {
  /// The look of a picture of a table that asks for `style`.
  func page(style: TableStyle?, title: String) -> HTMLOptions {
    HTMLOptions(tableStyle: style ?? .plain, dark: appearance == .dark, width: device.width, title: title)
  }

  /// `set width`, else the terminal's (output of a script or `-c` too, when it goes to one),
  /// else 80.
  func effectiveWidth(_ environment: Environment) -> Int {
    width ?? environment.terminalWidth() ?? 80
  }

  /// 40 rows on a terminal; batch output is never cut unless `set maxrows` says so.
  func effectiveMaxRows(_ environment: Environment) -> Int {
    maxRows ?? (environment.isTerminal ? 40 : 0)
  }

  func usesColor(_ environment: Environment) -> Bool {
    switch color {
    case .on: true
    case .off: false
    case .auto: environment.isTerminal && !environment.noColor
    }
  }
}
