import DataSourceKit
import DataSourceKitValues
import Foundation
import Testing

@testable import DataSourceScript

/// A statement stops when the `Task` running it is cancelled: no process-wide flag, so one
/// session's statement can be cancelled while another's goes on.
@Suite("Cancellation")
@MainActor
struct CancellationTests {
  /// A query SQLite spends minutes counting, in one blocking call.
  static let endless =
    "let big = sqlite \"Scripts/data/people.db\" query \"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
    + "SELECT x + 1 FROM c WHERE x < 2000000000) SELECT x FROM c\""

  @Test("cancelling one session's task stops its blocked SQLite count; the other session is untouched")
  func twoSessions() async throws {
    let (first, firstOutput, _) = await run("let kept = [1, 2, 3]")
    let (second, secondOutput, _) = await run("let other = range 0..5")
    // A line printed just before the endless statement says the run has begun: a task
    // cancelled before its first statement runs nothing, and says nothing.
    let begun = DispatchSemaphore(value: 0)
    firstOutput.onWrite = { if $0.contains("begun") { begun.signal() } }
    // The statement after the interrupted one must not run.
    let running = Task {
      await first.run(
        SourceFile(name: "a.dsh", text: "show [\"begun\"] as csv\n" + Self.endless + "\nlet after = 1"))
    }
    // Cancelled from another thread while the main actor is blocked inside SQLite (a moment
    // after the line before, so the count has begun on a machine busy with other tests).
    Thread.detachNewThread {
      _ = begun.wait(timeout: .now() + 300)
      usleep(500_000)
      running.cancel()
    }
    // Counting the query's two billion rows takes many minutes; cancelled, the statement fails
    // with the interrupt's message (how soon is not this test's to say).
    let ok = await running.value
    #expect(!ok)
    #expect(firstOutput.errors.contains("error: interrupted; the provider is as it was"))
    #expect(first.boundNames == ["kept"])
    // The other session never saw a cancellation.
    let secondOK = await second.run(SourceFile(name: "b.dsh", text: "show other | limit 2 as csv"))
    #expect(secondOK)
    #expect(secondOutput.text == "value\n0\n1\n")
    // And the first goes on with its next statement.
    let (_, _, again) = await run("show kept as csv", in: first)
    #expect(again)
    #expect(firstOutput.text.hasSuffix("value\n1\n2\n3\n"))
  }

  @Test("progress is counted per session, not globally")
  func progressPerSession() async {
    let (first, _, _) = await run("let people = csv \"Scripts/data/people.csv\"")
    let (second, _, _) = await run("let n = 1")
    #expect(first.progress.bytes > 0)
    #expect(second.progress.bytes == 0)
  }
}
