import Foundation

/// Text longer than the screen, shown through a pager as `git` and `man` show theirs: `$PAGER`
/// (run by the shell, so it may carry arguments), else `less -R`.
enum Pager {
  /// Pages `text` when it has more lines than the terminal; `false` when it fits, there is no
  /// terminal, or no pager would start (the caller prints it then).
  @MainActor
  static func show(_ text: String) -> Bool {
    guard let (rows, _) = Terminal.size(),
      text.split(separator: "\n", omittingEmptySubsequences: false).count > rows - 1
    else { return false }
    let configured = ProcessInfo.processInfo.environment["PAGER"] ?? ""
    // An empty PAGER, or `cat`, asks for no pager.
    if configured == "cat" { return false }
    var environment = ProcessInfo.processInfo.environment
    // less's defaults for a help text: keep colours, leave the text on the screen off.
    if environment["LESS"] == nil { environment["LESS"] = "FRX" }
    // The pager has the screen: the progress line stays away.
    ProgressLine.giveWay()
    // Spawned in dsh's own process group, not a new one as Foundation's Process makes: the pager
    // reads its keys from the terminal, which only the foreground group may.
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { return false }
    var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, ends[0], STDIN_FILENO)
    posix_spawn_file_actions_addclose(&actions, ends[1])
    let command = configured.isEmpty ? "exec less -R" : "exec \(configured)"
    let words: [String] = ["/bin/sh", "-c", command]
    let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    let variables: [UnsafeMutablePointer<CChar>?] =
      environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (arguments + variables).forEach { free($0) } }
    // The pager gets the signals a program started from a shell has: none blocked (this thread
    // may be a libdispatch worker's, which blocks nearly all), SIGPIPE and SIGXFSZ not ignored.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigmask(&attributes, &none)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    sigaddset(&defaults, SIGPIPE)
    sigaddset(&defaults, SIGXFSZ)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var child: pid_t = 0
    let spawned = posix_spawn(&child, "/bin/sh", &actions, &attributes, arguments, variables)
    close(ends[0])
    guard spawned == 0 else {
      close(ends[1])
      return false
    }
    // A pager that quits before reading everything closes the pipe: EPIPE, ignored (SIGPIPE is).
    let bytes = Array(text.utf8)
    var written = 0
    while written < bytes.count {
      let n = bytes[written...].withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
      if n > 0 { written += n } else if n < 0 && errno == EINTR { continue } else { break }
    }
    close(ends[1])
    var status: Int32 = 0
    while waitpid(child, &status, 0) < 0 && errno == EINTR {}
    // No pager found (sh's 127): print instead.
    let exited = status & 0x7F == 0
    return !(exited && (status >> 8) & 0xFF == 127)
  }
}
