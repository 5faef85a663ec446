import Foundation
import Synchronization

/// Work a served page asks of the session, done on the main actor while the session is idle:
/// at the prompt, or while it waits for the next line of a pipe.
///
/// A page draws the rows in its view only, so each scroll and each batch asks the session for
/// rows; the session's views and sources are the main actor's, and it renders them there. The
/// shell waits for its input in C (libedit's `el_gets`, a blocking `read`), so a queue the
/// actor's executor would run is never reached while a person thinks: the loops that wait for
/// input call ``runPending()`` instead, woken by the pipe ``wakeDescriptor`` reads from. Work
/// never runs in the middle of a statement, which may be half way through a change.
public final class IdleWork: Sendable {
  /// The one queue of the process.
  public static let shared = IdleWork()

  private let jobs = Mutex<[@MainActor @Sendable () -> Void]>([])
  /// The pipe's ends: a byte is written for each job, so a `poll` on the read end wakes.
  private let pipeEnds: (read: Int32, write: Int32)

  private init() {
    var ends: [Int32] = [-1, -1]
    if pipe(&ends) == 0 {
      for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
      _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
      _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
    }
    pipeEnds = (ends[0], ends[1])
  }

  /// The descriptor that becomes readable when work waits: the line editor polls it beside the
  /// terminal.
  public var wakeDescriptor: Int32 { pipeEnds.read }

  /// Queues `job` for the session's next idle moment and wakes whoever waits for input.
  func submit(_ job: @escaping @MainActor @Sendable () -> Void) {
    jobs.withLock { $0.append(job) }
    var byte: UInt8 = 1
    _ = write(pipeEnds.write, &byte, 1)
  }

  /// Runs the work queued so far, in order.
  @MainActor
  public func runPending() {
    var drained = [UInt8](repeating: 0, count: 256)
    while read(pipeEnds.read, &drained, drained.count) > 0 {}
    let queued = jobs.withLock { jobs in
      defer { jobs = [] }
      return jobs
    }
    for job in queued { job() }
  }

  /// Waits until `descriptor` can be read (or is at its end), running the work that comes
  /// meanwhile; a negative descriptor waits for work alone, for good.
  /// - Returns: false when a signal cut the wait short (^C on a terminal that sends SIGINT).
  @MainActor
  public func waitForInput(on descriptor: Int32) -> Bool {
    while true {
      var watched = [
        pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
        pollfd(fd: pipeEnds.read, events: Int16(POLLIN), revents: 0),
      ]
      if poll(&watched, 2, -1) < 0 {
        if errno == EINTR { return false }
        return true
      }
      if watched[1].revents != 0 { runPending() }
      if watched[0].revents != 0 { return true }
    }
  }
}
