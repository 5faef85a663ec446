import DataSourceKit
import DataSourceKitValues
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// JSON from the web: an array (or the array at a path) of items, fetched under ``Limits``.
///
/// With a page size, the URL is a template — `{page}` (from 1) or `{offset}` (from 0) — and each
/// ``loadMore()`` fetches the next page; an empty or short page is the last.
public final class HTTPProvider: DataProvider, PagingProvider, CompositionNode, RecordProviding {
  /// The URL, or URL template when paged (`{page}` from 1, `{offset}` from 0).
  public let url: String
  /// The path of keys to the array of items in each response, empty for the document itself.
  public let at: [String]
  /// Items to a page, or `nil` for one request.
  public let pageSize: Int?
  /// The limits every request is held to.
  public let limits: Limits
  /// The field that identifies an item, for diffing, or `nil` for the whole item.
  package let identityKey: String?
  /// Null markers and declared types.
  public let options: ReadOptions
  /// Where the last response came from, when a redirect took the request elsewhere.
  public private(set) var finalURL: String?
  private let loads: LoadTracker
  private var items: [Value] = []
  private var pagesLoaded = 0
  private var lastPageFull = false
  /// What went wrong in the last load, when it failed.
  public private(set) var lastError: DataSourceError?
  private var observers = ObserverList()
  /// The fields every item is known to have, or `nil`.
  public private(set) var knownFields: [String]?
  private let progress: LoadProgress?

  /// A provider of the JSON at `url`.
  ///
  /// - Parameter progress: counts the bytes of each response.
  public init(
    url: String, at: [String] = [], pageSize: Int? = nil, limits: Limits = Limits(),
    identityKey: String? = nil, options: ReadOptions = ReadOptions(), progress: LoadProgress? = nil
  ) {
    self.options = options
    self.url = url
    self.at = at
    self.pageSize = pageSize
    self.limits = limits
    self.identityKey = identityKey
    self.progress = progress
    loads = LoadTracker(clock: observers.clock)
  }

  /// Moves with every load and every page.
  public var structureClock: StructureClock { observers.clock }

  /// What a server may not stretch: the time for the whole request, the bytes taken, and
  /// redirects to other hosts.
  public struct Limits: Sendable {
    /// The largest response read by default: 100 MB.
    public static let defaultMaximumBytes = 100 << 20
    /// Seconds for the whole request: connecting, waiting and reading every byte.
    public var timeout: TimeInterval
    /// The largest response read, in bytes.
    public var maximumBytes: Int
    /// Whether a redirect may lead to another host (or from https to http).
    public var followsRedirectsToOtherHosts: Bool

    /// Limits of a time, a size and a number of redirects.
    public init(
      timeout: TimeInterval = 10, maximumBytes: Int = Limits.defaultMaximumBytes,
      followsRedirectsToOtherHosts: Bool = false
    ) {
      self.timeout = timeout
      self.maximumBytes = maximumBytes
      self.followsRedirectsToOtherHosts = followsRedirectsToOtherHosts
    }
  }

  /// Whether a URL is a page template, with `{page}` or `{offset}` in it.
  ///
  /// Such a URL is never requested as written; it needs a page size.
  public static func isPageTemplate(_ url: String) -> Bool {
    url.contains("{page}") || url.contains("{offset}")
  }

  /// Where loading stands.
  public var loadState: LoadState { loads.state }
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { lastError?.description }
  /// What went wrong, typed.
  public var loadError: DataSourceError? { lastError }
  /// Asks to be told when the data changes; observers are held weakly.
  public func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  /// Fetches the first page (or the whole list).
  ///
  /// On failure the provider is in `error`.
  public func load() async throws {
    try await loads.load(
      { try await fetch(page: 0) }, isEmpty: \.isEmpty,
      apply: { page in
        items = page
        pagesLoaded = 1
        lastPageFull = pageSize.map { page.count >= $0 } ?? false
        knownFields = Value.unionOfFields(items)
        lastError = nil
        observers.notify()
      },
      fail: { error in
        items = []
        lastError = error
        // Views over this provider must see it fail, not index items it no longer has.
        observers.notify()
      })
  }

  /// Whether another page may follow.
  public var hasMore: Bool { pageSize != nil && lastPageFull && loads.state != .error }

  /// Loads the next page; returns how many items it added.
  public func loadMore() async throws -> Int {
    guard hasMore else { return 0 }
    let page = try await fetch(page: pagesLoaded)
    items += page
    pagesLoaded += 1
    lastPageFull = pageSize.map { page.count >= $0 } ?? false
    if knownFields == nil { knownFields = Value.unionOfFields(items) }
    observers.notify()
    return page.count
  }

  /// What a server said in the body of an error response: the message of a JSON error (the
  /// fields APIs put it in: `message`, `error`, `error.message`, `detail`, `title`,
  /// `error_description`), else the first line of a short plain-text body; `nil` for an HTML
  /// page or nothing readable.
  static func errorMessage(in data: Data) -> String? {
    let limit = 300
    func shortened(_ text: String) -> String? {
      let line =
        text.split(whereSeparator: \.isNewline).first.map(String.init)?
        .trimmingCharacters(in: .whitespaces) ?? ""
      guard !line.isEmpty else { return nil }
      return line.count > limit ? String(line.prefix(limit)) + "…" : line
    }
    let document = data.withUnsafeBytes { raw in
      try? JSONReader.parseAll(raw.bindMemory(to: UInt8.self)).first
    }
    if let document {
      guard case .record(let record) = document else { return nil }
      for key in ["message", "error", "detail", "error_description", "title", "errors"] {
        switch record[key] {
        case .string(let text)?: return shortened(text)
        case .record(let inner)?:
          if case .string(let text)? = inner["message"] { return shortened(text) }
        case .list(let list)?:
          if case .record(let first)? = list.first, case .string(let text)? = first["message"] {
            return shortened(text)
          }
          if case .string(let text)? = list.first { return shortened(text) }
        default: continue
        }
      }
      return nil
    }
    guard data.count <= 4096, let text = String(data: data, encoding: .utf8) else { return nil }
    let start = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    guard !start.hasPrefix("<") else { return nil }
    return shortened(text)
  }

  /// The URL of a page: `{page}` counts from 1, `{offset}` from 0.
  public func url(ofPage page: Int) -> String {
    guard let size = pageSize else {
      precondition(!Self.isPageTemplate(url), "a page template needs a page size")
      return url
    }
    return url.replacingOccurrences(of: "{page}", with: String(page + 1))
      .replacingOccurrences(of: "{offset}", with: String(page * size))
  }

  private func fetch(page: Int) async throws -> [Value] {
    let address = url(ofPage: page)
    guard let target = URL(string: address) else {
      throw DataSourceError.httpTransport(url: address, failure: .notAURL)
    }
    let answer = try await HTTPRequest.get(target, address: address, limits: limits, progress: progress)
    let (data, response) = (answer.data, answer.response)
    if let final = answer.finalURL, final.absoluteString != address { finalURL = final.absoluteString }
    if let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
      throw DataSourceError.httpStatus(
        url: address, status: http.statusCode, message: Self.errorMessage(in: data))
    }
    let documents: [Value] = try data.withUnsafeBytes { raw in
      let bytes = raw.bindMemory(to: UInt8.self)
      do {
        return try JSONReader.parseAll(bytes)
      } catch let failure as JSONReader.Failure {
        // A CSV file where JSON was expected: `csv "URL"` is what reads it.
        let type = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") ?? ""
        let path = URL(string: address)?.path.lowercased() ?? ""
        if type.contains("csv") || type.contains("tab-separated") || path.hasSuffix(".csv")
          || path.hasSuffix(".tsv")
        {
          throw DataSourceError.sourceFailed(
            message:
              "GET \(address): the answer is CSV, and http reads JSON; csv \"\(address)\" reads a CSV file")
        }
        let (line, column) = failure.location(in: bytes)
        throw DataSourceError.json(path: address, line: line, column: column, message: failure.message)
      }
    }
    guard let document = documents.first, documents.count == 1 else {
      return try options.applied(to: documents, path: address)
    }
    guard let found = document.value(atPath: at) else {
      throw DataSourceError.jsonPathMissing(path: address, at: at.joined(separator: "."))
    }
    if case .list(let list) = found { return try options.applied(to: list, path: address) }
    throw DataSourceError.jsonNotAList(
      path: address, at: at.isEmpty ? nil : at.joined(separator: "."), found: found)
  }

  /// The number of sections.
  public var numberOfSections: Int { 1 }
  /// The number of items in a section.
  public func numberOfItems(inSection section: Int) -> Int { items.count }
  /// The item at an index path.
  public func item(at itemPath: ItemPath) -> Value { items[itemPath.item] }

  /// How `describe` names this node.
  package var nodeTitle: String {
    "http \(JSONWriter.quoted(url))"
      + (at.isEmpty ? "" : " at \(JSONWriter.quoted(at.joined(separator: "."))))")
      + (pageSize.map { " size \($0)" } ?? "")
  }
  /// What `describe` shows beside the name: counts and state.
  package var nodeDetail: String? {
    countsDetail
      + (finalURL.map { ", from \($0)" } ?? "")
      + (pageSize == nil
        ? "" : ", \(pagesLoaded) page\(pagesLoaded == 1 ? "" : "s")" + (hasMore ? ", more" : ""))
  }
}
