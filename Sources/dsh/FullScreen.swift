import DataSourceKit
import DataSourceKitValues
import DataSourceScript
import Foundation
import Synchronization

/// `browse` on the terminal: the alternate screen, keys read one at a time, the frame drawn
/// whole after each key, and the terminal given back exactly as it was when the user leaves (or
/// when SIGTERM, SIGHUP or a crash ends the process).
@MainActor
enum FullScreen {
  /// Shows `first` until the user leaves, and the views its keys open over it: `q` goes back
  /// from one to the view under it, `Q` leaves them all.
  static func browse(_ first: BrowseScreen) async {
    var saved = termios()
    guard tcgetattr(STDIN_FILENO, &saved) == 0 else { return }
    // The progress line of the statement stays away: the screen is browse's now.
    ProgressLine.giveWay()
    var raw = saved
    // Keys one at a time, not echoed; ^C and ^Z are keys here (^C stops a search or a reload).
    raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
    raw.c_iflag &= ~tcflag_t(IXON | ICRNL | INLCR)
    withUnsafeMutableBytes(of: &raw.c_cc) { cc in
      cc[Int(VMIN)] = 1
      cc[Int(VTIME)] = 0
    }
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw)
    TerminalModes.enterFullScreen(restoring: saved)
    // The alternate screen, the cursor hidden, the wheel reported (SGR mouse mode).
    write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[?1000h\u{1B}[?1006h")
    let resized = ResizeSignal.install()
    defer {
      ResizeSignal.uninstall(resized)
      TerminalModes.leaveFullScreen()
      var restored = saved
      tcsetattr(STDIN_FILENO, TCSAFLUSH, &restored)
    }
    var keys = KeyReader()
    var needsSize = true
    // The views opened, the first at the bottom; the screen is the last.
    var screens = [first]
    var screen = first
    // Where the last frame drawn stood, and its lines: a frame whose rows were not read (^C)
    // goes back to them, under a status line that says so, without reading rows again.
    var shown = screen.place
    var drawn: [String] = []
    /// Back to the view under the screen; `false` when it was the first.
    func back() -> Bool {
      guard screens.count > 1 else { return false }
      screens.removeLast()
      screen = screens[screens.count - 1]
      screen.returned()
      (shown, drawn, needsSize) = (screen.place, [], true)
      return true
    }
    while true {
      if needsSize, let size = Terminal.size() {
        screen.resize(rows: size.rows, columns: size.columns)
        needsSize = false
      }
      switch drawFrame(screen, keys: &keys) {
      case .drawn(let lines):
        (shown, drawn) = (screen.place, lines)
      case .stopped:
        screen.stoppedReading(backTo: shown)
        // The first frame has nothing to go back to: it is read again, as interruptible.
        guard !drawn.isEmpty else { continue }
        draw(Array(drawn.dropLast()) + [screen.statusLineNow])
      case .leave:
        if back() { continue }
        return
      }
      // Marked rows stay a moment, then the frame is drawn without them.
      let timeout: Int32 = screen.markedRows.isEmpty ? -1 : 1500
      switch keys.next(timeout: timeout, resized: resized) {
      case .resized:
        needsSize = true
      case .timedOut:
        screen.clearMarks()
      case .closed:
        return
      case .key(let key):
        // A key may read rows before the frame does (`G` finds how many of the last rows fit,
        // `n` searches): as slow, and as interruptible.
        // ^C is the watcher's to read (one reader of the terminal, so no key is split).
        let (effect, heard) = watching(screen) { interruption in
          screen.handle(key, interrupted: { interruption.isInterrupted })
        }
        keys.keep(heard.typed)
        if heard.leaving {
          if back() { continue }
          return
        }
        if heard.interrupted, screen.place != shown {
          screen.stoppedReading(backTo: shown)
          continue
        }
        switch effect {
        case .redraw: break
        case .back: if !back() { return }
        case .bind(let name): await screen.bind(name)
        case .leave: return
        case .reload:
          if await reload(screen, keys: &keys), !back() { return }
        case .open(let derivation):
          let (opened, leaving) = await open(derivation, over: screen, keys: &keys)
          if let opened {
            screens.append(opened)
            screen = opened
            (shown, drawn) = (screen.place, [])
          } else if leaving, !back() {
            return
          }
        }
      }
    }
  }

  /// What became of a frame: drawn, its reads stopped by ^C, or `q` typed while they ran.
  private enum Drawing {
    case drawn([String])
    case stopped
    case leave
  }

  /// Draws the screen's frame, whose rows may take long to read.
  ///
  /// A page of a database view far from the last one read may: after 200 ms the status line
  /// says so, and ^C or `q` stops the reads under way (`ReadInterruption`), as they stop a
  /// statement's. Other keys typed meanwhile are kept for after.
  private static func drawFrame(_ screen: BrowseScreen, keys: inout KeyReader) -> Drawing {
    let (lines, heard) = watching(screen) { _ in screen.frame() }
    keys.keep(heard.typed)
    if heard.leaving { return .leave }
    if heard.interrupted { return .stopped }
    draw(lines)
    return .drawn(lines)
  }

  /// Runs `body` with the rows it reads interruptible (`ReadInterruption`) by ^C or `q`, which an
  /// ``InterruptWatcher`` listens for once it has run 200 ms; returns what it heard meanwhile.
  private static func watching<T>(_ screen: BrowseScreen, _ body: (ReadInterruption) -> T) -> (
    T, InterruptWatcher.Heard
  ) {
    let interruption = ReadInterruption()
    let search = screen.searchProgress
    let watcher = InterruptWatcher(
      doing: "reading rows", progress: nil, statusRow: screen.size.rows, columns: screen.size.columns,
      leavesOnQ: screen.prompt == nil, interrupt: { interruption.interruptAll() }, saying: { search.text })
    let result = ReadInterruption.$current.withValue(interruption) { body(interruption) }
    return (result, watcher.stop())
  }

  /// Runs the screen's reload while a watcher reads ^C from the terminal and cancels it, and
  /// draws the loads' progress on the status line (the screen itself waits for the reload).
  ///
  /// - Returns: whether `q` came meanwhile: the reload stopped, and the screen is to be left.
  private static func reload(_ screen: BrowseScreen, keys: inout KeyReader) async -> Bool {
    screen.reloadStarting()
    draw(screen.frame())
    let reloading = Task { @MainActor in try await screen.reload() }
    // A ^C typed right after r may already be among the bytes read with it.
    if keys.interruptWaiting() { reloading.cancel() }
    let watcher = InterruptWatcher(
      doing: "reloading", progress: screen.progress, statusRow: screen.size.rows,
      columns: screen.size.columns,
      interrupt: { reloading.cancel() })
    let result = await reloading.result
    let heard = watcher.stop()
    keys.keep(heard.typed)
    if case .failure(let error) = result { screen.reloadFailed(error) }
    return heard.leaving
  }

  /// Opens the view of `derivation` over `screen` while a watcher reads ^C from the terminal
  /// and cancels it (a count of ten million rows takes a while), the loads' progress drawn on
  /// the status line.
  ///
  /// - Returns: the new view's screen, or `nil` (the status line says why); and whether `q`
  ///   came meanwhile.
  private static func open(_ derivation: BrowseDerivation, over screen: BrowseScreen, keys: inout KeyReader)
    async -> (BrowseScreen?, leaving: Bool)
  {
    screen.openStarting(derivation)
    draw(screen.frame())
    let opening = Task { @MainActor in try await screen.open(derivation) }
    if keys.interruptWaiting() { opening.cancel() }
    let watcher = InterruptWatcher(
      doing: derivation.stage, progress: screen.progress, statusRow: screen.size.rows,
      columns: screen.size.columns, interrupt: { opening.cancel() })
    let result = await opening.result
    let heard = watcher.stop()
    keys.keep(heard.typed)
    switch result {
    case .success(let opened):
      return (opened, heard.leaving)
    case .failure(let error):
      screen.openFailed(error)
      return (nil, heard.leaving)
    }
  }

  private static func draw(_ lines: [String]) {
    var text = "\u{1B}[H"
    for (index, line) in lines.enumerated() {
      text += line + "\u{1B}[0m\u{1B}[K"
      if index < lines.count - 1 { text += "\r\n" }
    }
    write(text)
  }

  private static func write(_ text: String) { StandardOutput.write(text, to: STDOUT_FILENO) }
}

/// SIGWINCH as a byte on a pipe, so the loop that waits for a key wakes when the window changes.
enum ResizeSignal {
  static let pipeEnd = Atomic<Int32>(-1)

  /// Starts catching SIGWINCH; returns the pipe's read end.
  static func install() -> Int32 {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { return -1 }
    _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
    pipeEnd.store(ends[1], ordering: .relaxed)
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in
      var byte: UInt8 = 1
      _ = Glibc.write(ResizeSignal.pipeEnd.load(ordering: .relaxed), &byte, 1)
    }
    sigemptyset(&action.sa_mask)
    action.sa_flags = SA_RESTART
    sigaction(SIGWINCH, &action, nil)
    return ends[0]
  }

  static func uninstall(_ readEnd: Int32) {
    signal(SIGWINCH, SIG_DFL)
    let writeEnd = pipeEnd.exchange(-1, ordering: .relaxed)
    if writeEnd >= 0 { close(writeEnd) }
    if readEnd >= 0 { close(readEnd) }
  }
}

/// Reads the terminal while slow work runs: a reload, or the rows a key moves to.
///
/// From 200 ms on it draws on the status line what the work is doing, every 100 ms, with ^C's
/// promise, and reads the keys: ^C interrupts the work, `q` interrupts it and leaves, and any
/// other key is kept for after. Work done sooner never reads a key.
final class InterruptWatcher: Sendable {
  private let stopped = Atomic<Bool>(false)
  private let ended = DispatchSemaphore(value: 0)
  /// What was heard meanwhile, written by the watching thread until it ends.
  private let heard = Mutex<Heard>(Heard())

  /// What the user typed while the work ran.
  struct Heard: Sendable {
    /// ^C (or `q`) came: the work was interrupted.
    var interrupted = false
    /// `q` came: the screen is to be left once the work has stopped.
    var leaving = false
    /// The other bytes, in order: the keys typed ahead.
    var typed: [UInt8] = []
  }

  /// - Parameters:
  ///   - doing: what the status line says is under way (`reloading`, `reading rows`).
  ///   - progress: how far the loads have got, when there are loads to count.
  ///   - leavesOnQ: whether `q` leaves (not while a `/` or `:` prompt is typed, where it is text).
  ///   - interrupt: stops the work; called once, on the watching thread.
  init(
    doing: String, progress: LoadProgress?, statusRow: Int, columns: Int, leavesOnQ: Bool = true,
    interrupt: @escaping @Sendable () -> Void, saying: @escaping @Sendable () -> String? = { nil }
  ) {
    Thread.detachNewThread { [self] in
      defer { ended.signal() }
      let start = DispatchTime.now().uptimeNanoseconds
      var cancelled = false
      // Work that ends within 200 ms leaves the terminal's bytes alone: the keys typed ahead
      // are read by the screen, as keys.
      while !stopped.load(ordering: .relaxed), DispatchTime.now().uptimeNanoseconds - start < 200_000_000 {
        usleep(5_000)
      }
      var lastDrawn: UInt64 = 0
      while !stopped.load(ordering: .relaxed) {
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        // Every 100 ms; the terminal is polled every 20 ms, so stopping waits no longer.
        if elapsed - lastDrawn >= 100_000_000 {
          lastDrawn = elapsed
          let seconds = String(format: "%.1f s", Double(elapsed) / 1e9)
          let text =
            " " + (saying() ?? progress.map { ProgressLine.text(of: $0, doing: doing) } ?? doing) + " · "
            + seconds
            + (cancelled ? " · stopping" : " · ^C stops")
          let line = String(text.prefix(columns)).padding(toLength: columns, withPad: " ", startingAt: 0)
          StandardOutput.write("\u{1B}[\(statusRow);1H\u{1B}[7m" + line + "\u{1B}[0m", to: STDOUT_FILENO)
        }
        var poller = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 20) > 0 else { continue }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = read(STDIN_FILENO, &buffer, buffer.count)
        guard count > 0 else { continue }
        for byte in buffer[0..<count] {
          let leaves = leavesOnQ && byte == UInt8(ascii: "q")
          guard byte == 3 || leaves else {
            heard.withLock { $0.typed.append(byte) }
            continue
          }
          heard.withLock {
            $0.interrupted = true
            if leaves { $0.leaving = true }
          }
          if !cancelled {
            interrupt()
            cancelled = true
          }
        }
      }
    }
  }

  /// Stops watching and waits until the watcher has written its last line (the frame drawn
  /// next is not overwritten); returns what it heard.
  func stop() -> Heard {
    stopped.store(true, ordering: .relaxed)
    ended.wait()
    return heard.withLock { $0 }
  }
}

/// Turns the terminal's bytes into keys: characters (UTF-8), the escape sequences of arrows,
/// pages, Home and End, and SGR mouse reports of the wheel.
struct KeyReader {
  enum Event {
    case key(BrowseKey)
    case resized
    case timedOut
    /// Standard input ended (the terminal went away).
    case closed
  }

  private var pending: [UInt8] = []

  /// How long the rest of an escape sequence may take to follow its Escape, in milliseconds.
  ///
  /// After that the Escape is a key of its own (vim's `ttimeoutlen`). An arrow over a slow
  /// link (ssh across a continent) arrives in pieces tens of milliseconds apart.
  static let escapeTime: Int32 = 100

  /// The next key, or a resize, or the timeout (milliseconds, -1 for none).
  mutating func next(timeout: Int32, resized: Int32) -> Event {
    while true {
      if let key = decode() { return .key(key) }
      var fds = [
        pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
        pollfd(fd: resized, events: Int16(POLLIN), revents: 0),
      ]
      let ready = poll(&fds, resized >= 0 ? 2 : 1, pending.isEmpty ? timeout : Self.escapeTime)
      if ready < 0 {
        if errno == EINTR { continue }
        return .closed
      }
      if ready == 0 {
        // A lone Escape: no sequence followed it.
        if !pending.isEmpty {
          pending.removeAll()
          return .key(.escape)
        }
        return .timedOut
      }
      if resized >= 0, fds[1].revents & Int16(POLLIN) != 0 {
        var drain = [UInt8](repeating: 0, count: 64)
        _ = read(resized, &drain, drain.count)
        return .resized
      }
      var buffer = [UInt8](repeating: 0, count: 256)
      let count = read(STDIN_FILENO, &buffer, buffer.count)
      if count < 0, errno == EINTR { continue }
      if count <= 0 { return .closed }
      pending += buffer[0..<count]
    }
  }

  /// Takes bytes read elsewhere (while slow work ran) as typed before any read from now on.
  mutating func keep(_ bytes: [UInt8]) { pending += bytes }

  /// Whether ^C is among the bytes waiting now (a long search asks now and then); the other
  /// bytes are kept for later.
  mutating func interruptWaiting() -> Bool {
    var poller = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
    if poll(&poller, 1, 0) > 0 {
      var buffer = [UInt8](repeating: 0, count: 256)
      let count = read(STDIN_FILENO, &buffer, buffer.count)
      if count > 0 { pending += buffer[0..<count] }
    }
    guard let index = pending.firstIndex(of: 3) else { return false }
    pending.remove(at: index)
    return true
  }

  /// One key from the front of the pending bytes, or `nil` when they do not make one yet.
  private mutating func decode() -> BrowseKey? {
    guard let first = pending.first else { return nil }
    switch first {
    case 3: return take(1, .interrupt)
    case 13, 10: return take(1, .enter)
    case 127, 8: return take(1, .backspace)
    case 27: return decodeEscape()
    default:
      // A character of 1 to 4 UTF-8 bytes.
      let length = first < 0x80 ? 1 : first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : 2
      guard pending.count >= length else { return nil }
      let text = String(decoding: pending[0..<length], as: UTF8.self)
      pending.removeFirst(length)
      return text.first.map(BrowseKey.character)
    }
  }

  private mutating func decodeEscape() -> BrowseKey? {
    guard pending.count >= 2 else { return nil }
    let second = pending[1]
    if second == UInt8(ascii: "O") {
      guard pending.count >= 3 else { return nil }
      let keys: [UInt8: BrowseKey] = [65: .up, 66: .down, 67: .right, 68: .left, 72: .home, 70: .end]
      let key = keys[pending[2]]
      pending.removeFirst(3)
      return key ?? .escape
    }
    guard second == UInt8(ascii: "[") else {
      // Escape, then another key: the escape leaves.
      return take(1, .escape)
    }
    // CSI: parameters, then one final byte from @ to ~.
    guard let end = pending.indices.dropFirst(2).first(where: { (0x40...0x7E).contains(pending[$0]) }) else {
      return nil
    }
    let parameters = String(decoding: pending[2..<end], as: UTF8.self)
    let final = pending[end]
    pending.removeFirst(end + 1)
    switch (parameters, final) {
    case ("", 65): return .up
    case ("", 66): return .down
    case ("", 67): return .right
    case ("", 68): return .left
    case ("", 72), ("1", 126), ("7", 126): return .home
    case ("", 70), ("4", 126), ("8", 126): return .end
    case ("5", 126): return .pageUp
    case ("6", 126): return .pageDown
    default:
      // SGR mouse: ESC [ < button ; x ; y M — 64 is the wheel up, 65 down.
      if parameters.hasPrefix("<"), final == UInt8(ascii: "M") {
        let button = parameters.dropFirst().split(separator: ";").first.flatMap { Int($0) }
        if button == 64 { return .wheelUp }
        if button == 65 { return .wheelDown }
      }
      return decode()
    }
  }

  private mutating func take(_ count: Int, _ key: BrowseKey) -> BrowseKey {
    pending.removeFirst(count)
    return key
  }
}
