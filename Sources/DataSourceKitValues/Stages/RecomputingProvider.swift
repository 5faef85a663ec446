import DataSourceKit

/// A provider that computes its items from the whole of its sources (`group by`, `join`, a
/// window), again after every change of them.
///
/// Loading loads each source that has not loaded (or failed), reloading reloads them, and then
/// the provider computes: `refresh` does both, given how to bring a source up.
package protocol RecomputingProvider: DataProvider {
  /// Brings each source up with `loadSource`, then computes the items.
  func refresh(_ loadSource: (any DataProvider<Value>) async throws -> Void) async throws
}

extension RecomputingProvider {
  package func load() async throws {
    try await refresh { source in
      if source.loadState == .initial || source.loadState == .error { try await source.load() }
    }
  }

  package func reload() async throws { try await refresh { try await $0.reload() } }
}
