import Foundation
import Testing

/// How long a test waits for an event (a prompt, a line, a process's end) before it calls the
/// wait a hang.
///
/// Tests never measure speed: a busy 2-core machine may take many times as long as an idle one,
/// and a test that fails for that teaches everyone to ignore red. They wait for the event itself,
/// and this ceiling only stops a wait that would never end. Speed is `Scripts/bench.sh`'s.
enum Hang {
  static let ceiling: Double = 300

  /// Records that `what` did not happen within the ceiling.
  static func record(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
    Issue.record("hung: \(what) (nothing after \(Int(ceiling)) s)", sourceLocation: sourceLocation)
  }
}
