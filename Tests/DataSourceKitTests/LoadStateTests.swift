import Testing

@testable import DataSourceKit
@testable import DataSourceKitFiles
@testable import DataSourceKitValues

@Suite("Loading states")
struct LoadStateTests {
  static let allowed: Set<[LoadState]> = [
    [.initial, .loading],
    [.loading, .loaded], [.loading, .noContent], [.loading, .error],
    [.refreshing, .loaded], [.refreshing, .noContent], [.refreshing, .error],
    [.loaded, .refreshing], [.loaded, .noContent], [.loaded, .error],
    [.noContent, .refreshing], [.noContent, .loaded], [.noContent, .error],
    [.error, .loading], [.error, .refreshing], [.error, .loaded], [.error, .noContent], [.error, .error],
  ]

  static let allPairs: [(LoadState, LoadState)] = LoadState.allCases.flatMap { a in
    LoadState.allCases.map { (a, $0) }
  }

  @Test("every transition is allowed or refused as the state machine says", arguments: allPairs)
  func transition(from: LoadState, to: LoadState) throws {
    #expect(LoadStateMachine.allows(from, to: to) == Self.allowed.contains([from, to]))
  }

  @Test("a refused transition throws and keeps the state")
  func refused() throws {
    var machine = LoadStateMachine()
    func refusal(_ next: LoadState) -> LoadStateError? {
      do {
        try machine.transition(to: next)
        return nil
      } catch {
        return error
      }
    }
    #expect(refusal(.loaded) == LoadStateError(from: .initial, to: .loaded))
    #expect(machine.state == .initial)
    try machine.transition(to: .loading)
    try machine.transition(to: .loaded)
    #expect(refusal(.loading) == LoadStateError(from: .loaded, to: .loading))
    #expect(machine.state == .loaded)
  }

  @Test("loading the first time, refreshing after, loading again after an error")
  func beginStates() {
    var machine = LoadStateMachine()
    let first = machine.begin()
    #expect(machine.state == .loading)
    machine.finish(first, with: .loaded)
    _ = machine.begin()
    #expect(machine.state == .refreshing)
    var failed = LoadStateMachine()
    failed.finish(failed.begin(), with: .error)
    _ = failed.begin()
    #expect(failed.state == .loading)
  }

  @Test("a stale load's result is ignored")
  func staleLoads() {
    var machine = LoadStateMachine()
    let old = machine.begin()
    let new = machine.begin()
    let staleApplied = machine.finish(old, with: .error)
    #expect(!staleApplied)
    #expect(machine.state == .loading)
    let currentApplied = machine.finish(new, with: .loaded)
    #expect(currentApplied)
    #expect(machine.state == .loaded)
  }

  @Test("the strongest state: loading > refreshing > error > noContent > loaded > initial")
  func strongest() {
    #expect(LoadState.strongest([.loaded, .error, .noContent]) == .error)
    #expect(LoadState.strongest([.initial, .loaded]) == .loaded)
    #expect(LoadState.strongest([.refreshing, .error]) == .refreshing)
    #expect(LoadState.strongest([.loading, .refreshing]) == .loading)
  }

  @Test("a provider whose file went bad is in error, with no items; reloading a good file recovers")
  func providerError() async throws {
    let path = try temporaryFile("a\n1\n2\n")
    let provider = CSVProvider(path: path)
    try await provider.load()
    #expect(provider.loadState == .loaded)
    try "a\n\"never closed\n".write(toFile: path, atomically: true, encoding: .utf8)
    await #expect(throws: DataSourceError.self) { try await provider.reload() }
    #expect(provider.loadState == .error)
    #expect(provider.numberOfItems(inSection: 0) == 0)
    #expect(provider.errorDescription?.contains(":2: quoted field is never closed") == true)
    try "a\n3\n".write(toFile: path, atomically: true, encoding: .utf8)
    try await provider.reload()
    #expect(provider.loadState == .loaded)
    #expect(provider.allItems[0] == [record(["a": .int(3)])])
  }

  @Test("a placeholder covers a source with no content or in error, which then reports zero rows")
  func placeholder() async throws {
    let path = try temporaryFile("a\n1\n")
    let provider = CSVProvider(path: path)
    try await provider.load()
    let table = TableAdapter(
      provider: provider, presenter: ClosurePresenter(style: .basic) { i, _ in i.description })
    let covered = PlaceholderDecorator(wrapping: table, label: "placeholder", empty: { _ in "nothing" }) {
      error in
      "failed: \(error ?? "?")"
    }
    #expect(covered.covering == nil)
    #expect(covered.numberOfRows(inSection: 0) == 1)
    try "".write(toFile: path, atomically: true, encoding: .utf8)
    try? await covered.reload()
    #expect(covered.loadState == .error)
    #expect(covered.numberOfSections == 1 && covered.numberOfRows(inSection: 0) == 0)
    #expect(
      covered.supplementaryLines(.placeholder, inSection: 0) == [
        "failed: \(path): no header row (the file is empty)"
      ])
    try "a\n".write(toFile: path, atomically: true, encoding: .utf8)
    try await covered.reload()
    #expect(covered.loadState == .noContent)
    #expect(covered.supplementaryLines(.placeholder, inSection: 0) == ["nothing"])
  }
}

extension LoadState: CustomTestStringConvertible {
  public var testDescription: String { rawValue }
}
