import Foundation
import Testing

@testable import DataSourceScript

/// The test server (Tests/dshTests/Fixtures/http_server.py) on a free port of 127.0.0.1.
final class TestServer {
  let process = Process()
  let port: Int

  /// Starts the server; it stops after `idle` seconds without a request.
  init(idle: Int = 60) throws {
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
      "python3", DSHProcess.packageRoot + "/Tests/dshTests/Fixtures/http_server.py", "0", String(idle),
    ]
    let output = Pipe()
    process.standardOutput = output
    // Not the test runner's own stderr: a server left running would keep it open.
    process.standardError = FileHandle.nullDevice
    try process.run()
    // The server's first line is "PORT n".
    var line = ""
    while !line.hasSuffix("\n") {
      let byte = output.fileHandleForReading.readData(ofLength: 1)
      if byte.isEmpty { break }
      line += String(decoding: byte, as: UTF8.self)
    }
    guard line.hasPrefix("PORT "),
      let port = Int(line.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines))
    else {
      process.terminate()
      throw POSIXError(.ECONNREFUSED)
    }
    self.port = port
  }

  var base: String { "http://127.0.0.1:\(port)" }

  deinit { process.terminate() }
}

@Suite("HTTP sources", .serialized)
struct HTTPTests {
  @Test(
    "null and types read a web source as they read a file, page by page; a value that does not fit names the URL and the item"
  )
  func typedPages() throws {
    let server = try TestServer()
    let items = "\(server.base)/items?size=5&total=5"
    let result = try DSHProcess.run([
      "-c", "let h = http \"\(items)\" null \"g1\" types {id: text}", "-c", "h",
      "-c", "show h | where group == null and id > \"0\" as csv",
      // The last page is empty: types has no fields to check there, and that is no error.
      "-c",
      "let f = paged http \"\(server.base)/items?page={page}&size=3&total=6\" types {id: double} size 3",
      "-c", "more f", "-c", "more f", "-c", "f",
      "-c", "let bad = http \"\(items)\" types {name: int}",
    ])
    #expect(
      result.output.contains(
        "h: http provider · 5 items in 1 section · fields id text, name text, group text (2 null) · loaded\n")
    )
    #expect(result.output.contains("id,name,group\n1,item 1,\n4,item 4,\n"))
    #expect(
      result.output.contains(
        "f: http provider · 6 items in 1 section · fields id double, name text, group text · loaded"))
    #expect(result.output.contains("\(items) (item 1): name is \"item 0\", not an int"))
    #expect(result.status == 1)
  }

  @Test("help examples that fetch from the web run against a local server")
  func helpExamplesWithServer() throws {
    let server = try TestServer()
    let examples = HelpCatalogue.topics.flatMap(\.examples).filter {
      $0.contains(HelpCatalogue.exampleServer)
    }
    #expect(!examples.isEmpty)
    for example in examples {
      let script = example.replacingOccurrences(of: HelpCatalogue.exampleServer, with: server.base)
      let result = try DSHProcess.run(["-c", script])
      #expect(result.status == 0, "\(example)\n\(result.output)")
    }
  }

  @Test(
    "a page template is never requested as written: the first page is page 1; without paged it is an error")
  func pageTemplates() throws {
    let server = try TestServer()
    // The server answers 400 to a page that is not a number, as a real API does.
    let literal = try DSHProcess.run(["-c", "let x = http \"\(server.base)/items?page=%7Bpage%7D\""])
    #expect(literal.output.contains("HTTP 400"))
    let result = try DSHProcess.run([
      "-c", "let first = paged http \"\(server.base)/items?page={page}&size=2&total=5\" size 2",
      "-c", "show first as csv",
      "-c", "let unpaged = http \"\(server.base)/items?page={page}&size=2\"",
    ])
    #expect(
      result.output == """
        id,name,group
        0,item 0,g0
        1,item 1,g1
        -c#3:1:20: error: the URL has {page} or {offset}, so it is fetched a page at a time; write: paged http "\(server.base)/items?page={page}&size=2" size N
        let unpaged = http "\(server.base)/items?page={page}&size=2"
                           ^\(String(repeating: "~", count: server.base.count + 26))

        """)
    #expect(result.status == 1)
  }

  @Test("pages by {page} and {offset}, more until a short page, the footer while pages remain")
  func paging() throws {
    let server = try TestServer()
    let result = try DSHProcess.run([
      "-c", "let feed = paged http \"\(server.base)/items?page={page}&size=100&total=250\" key id size 100",
      "-c", "feed", "-c", "let t = table feed with cell basic \"{name}\" | more",
      "-c", "show t rows -1.. as plain", "-c", "more feed", "-c", "more t", "-c", "more feed", "-c",
      "show t rows -1.. as plain",
      "-c", "let off = paged http \"\(server.base)/offset?offset={offset}&size=40&total=90\" size 40", "-c",
      "more off",
      "-c", "more off", "-c", "off",
    ])
    #expect(result.status == 0, "\(result.output)")
    #expect(
      result.output == """
        feed: http provider · 100 items in 1 section · fields id int, name text, group text · key id · loaded
          ⋮
          item 99
        Load more…
        100 rows (1 shown)
        loaded 100 items into feed
        feed: insert rows [0, 100]…[0, 199]
        loaded 50 items into t (the last page)
        t: insert rows [0, 200]…[0, 249]
           reload footers of sections 0
        feed: no more pages
          ⋮
          item 249
        250 rows (1 shown)
        loaded 40 items into off
        off: insert rows [0, 40]…[0, 79]
        loaded 10 items into off (the last page)
        off: insert rows [0, 80]…[0, 89]
        off: http provider · 90 items in 1 section · fields id int, name text, group text · loaded

        """)
  }

  @Test("an array at a path; errors name the URL and the status, line or cause")
  func errors() throws {
    let server = try TestServer()
    let result = try DSHProcess.run([
      "-c", "show http \"\(server.base)/nested\" at \"data.items\" as csv",
      "-c", "show http \"\(server.base)/error\"", "-c", "show http \"\(server.base)/bad\"",
      "-c", "show http \"\(server.base)/object\"", "-c",
      "show http \"\(server.base)/slow?seconds=3\" timeout 1",
      "-c", "let p = paged [1, 2, 3] size 2", "-c", "more p", "-c", "more p", "-c", "more nothing",
      "-c", "show http \"\(server.base)/items?page=x\"", "-c", "show http \"\(server.base)/plain-error\"",
      "-c", "show http \"\(server.base)/html-error\"",
    ])
    #expect(result.status == 1)
    #expect(result.output.hasPrefix("id,name,group\n0,item 0,g0\n1,item 1,g1\n2,item 2,g2\n"))
    // What the server said comes with the status: a JSON error's message, a plain text's first
    // line; an HTML page is left out.
    #expect(result.output.contains("error: GET \(server.base)/error: HTTP 500: boom\n"))
    #expect(
      result.output.contains("error: GET \(server.base)/items?page=x: HTTP 400: page must be a number\n"))
    #expect(
      result.output.contains(
        "error: GET \(server.base)/plain-error: HTTP 503: down for maintenance until 10:00\n"))
    #expect(result.output.contains("error: GET \(server.base)/html-error: HTTP 404\n"))
    #expect(result.output.contains("error: \(server.base)/bad:1:11: expected a field name in quotes"))
    #expect(result.output.contains("error: \(server.base)/object: expected a list of items, found record"))
    #expect(result.output.contains("error: GET \(server.base)/slow?seconds=3: timed out after 1 s"))
    #expect(
      result.output.contains(
        "loaded 1 item into p (the last page)\np: insert rows [0, 2]\np: no more pages\n"))
    #expect(result.output.contains("error: no binding named 'nothing'"))
  }

  @Test(
    "a server that never stops, drips bytes, announces 10 GB or redirects away is stopped with the limit it hit"
  )
  func hostileServers() throws {
    let server = try TestServer()
    let away = "http://localhost:\(server.port)/items%3Fsize%3D2%26total%3D2"
    let result = try DSHProcess.run([
      "-c", "show http \"\(server.base)/endless\" maxsize 5",
      "-c", "show http \"\(server.base)/drip?seconds=1\" timeout 2",
      "-c", "show http \"\(server.base)/huge\"",
      "-c", "show http \"\(server.base)/redirect?to=\(away)\"",
      // Another port of the same host is another server (a local service), for csv too.
      "-c", "show csv \"\(server.base)/redirect?to=http://127.0.0.1:1/secret.csv\"",
      "-c", "let near = http \"\(server.base)/redirect?to=/items%3Fsize%3D2%26total%3D2\"",
      "-c", "describe near",
      "-c", "let far = http \"\(server.base)/redirect?to=\(away)\" redirects any",
      "-c", "describe far",
    ])
    // Without limits the first request never ends, and the run stops at the hang ceiling.
    #expect(result.status == 1)
    #expect(
      result.output.contains(
        "GET \(server.base)/endless: the response is larger than 5 MB, the limit; raise it with: maxsize MEGABYTES"
      ))
    #expect(
      result.output.contains("GET \(server.base)/drip?seconds=1: timed out after 2 s (the whole request;"))
    #expect(result.output.contains("the response is larger than 100 MB (it announced 10240 MB)"))
    #expect(
      result.output.contains(
        "on another host or port; dsh follows redirects within the URL's host and port only"))
    #expect(
      result.output.contains("redirected to http://127.0.0.1:1/secret.csv, on another host or port"),
      "\(result.output)")
    #expect(result.output.contains("2 items, loaded, from \(server.base)/items?size=2&total=2)"))
    #expect(
      result.output.contains("2 items, loaded, from http://localhost:\(server.port)/items?size=2&total=2)"))
  }

  @Test("a session keeps each file it fetched while a provider reads it, apart from other sessions' files")
  @MainActor
  func fetchedFilesPerSession() async throws {
    let server = try TestServer()
    let people = "\(server.base)/data/people.csv"
    let output = WrittenText()
    let first = Session(output: output)
    var second: Session? = Session(output: output)
    func run(_ text: String, in session: Session?) async {
      #expect(await session?.run(SourceFile(name: "t.dsh", text: text)) == true, "\(output.text)")
    }
    await run(
      "let p = csv \"\(people)\"\nlet t = json \"\(server.base)/data/teams.json\" at \"teams\"", in: first)
    #expect(first.fetchedFiles.count == 2)
    #expect(second?.fetchedFiles.count == 0)
    await run("let p = csv \"\(people)\"", in: second)
    #expect(second?.fetchedFiles.count == 1)
    // Bound anew, the provider that read the fetched file goes, and the file with it.
    await run("let p = [1, 2]", in: first)
    #expect(first.fetchedFiles.count == 1)
    // Another session ended: its files went with it, and this one's are still read.
    second = nil
    output.text = ""
    await run("show t | limit 1 | select name as csv", in: first)
    #expect(output.text == "name\nResearch\n")
  }

  @Test(
    "csv, json and parquet read a file from a URL under the request limits; --safe refuses it; dsh URL opens it"
  )
  func filesFromURLs() throws {
    let server = try TestServer()
    let people = "\(server.base)/data/people.csv"
    let result = try DSHProcess.run([
      "-c", "let p = csv \"\(people)\" key id", "-c", "p",
      "-c", "show p | where age > 45 | sort by name as csv",
      "-c", "show json \"\(server.base)/data/teams.json\" at \"teams\" | select name as csv",
      "-c", "show json \"\(server.base)/data/events.jsonl\" | limit 1 as csv",
      "-c", "show csv \"\(server.base)/data/missing.csv\"",
      "-c", "show csv \"\(server.base)/endless\" maxsize 1",
      "-c", "show csv \"Scripts/data/people.csv\" timeout 5",
    ])
    #expect(
      result.output.contains(
        "p: csv provider · 10 items in 1 section · fields id int, name text, email text, team text (1 null), age int, active bool (1 null), joined date · key id · loaded"
      ), "\(result.output)")
    #expect(
      result.output.contains("id,name,email,team,age,active,joined\n10,\"Edsger \"\"EWD\"\" Dijkstra\""))
    #expect(result.output.contains("name\nResearch\nEngineering\nDesign\n"), "\(result.output)")
    #expect(result.output.contains("at,kind,user,page\n09:00,login,ada,\n"), "\(result.output)")
    #expect(result.output.contains("error: GET \(server.base)/data/missing.csv: HTTP 404: not found"))
    #expect(
      result.output.contains("GET \(server.base)/endless: the response is larger than 1 MB, the limit"),
      "\(result.output)")
    #expect(
      result.output.contains(
        "error: timeout limits a request: it goes with a URL (csv \"https://…\" timeout …), not a file on this machine"
      ), "\(result.output)")
    let safe = try DSHProcess.run(["--safe", "-c", "show csv \"\(people)\""])
    #expect(safe.output.contains("--safe refuses the network (csv \"\(people)\")"), "\(safe.output)")
    // A URL given as the file to open is bound by its file's name.
    let opened = try DSHProcess.run([people], input: "show people | limit 1 as csv\n")
    #expect(
      opened.output.hasPrefix("id,name,email,team,age,active,joined\n1,Ada Lovelace,"), "\(opened.output)")
    // A Parquet file from the web is read as the same file on this machine is.
    let penguins = "\(server.base)/data/penguins.parquet"
    let query = "| group by species with n = count(), mass = avg(body_mass_g) as csv"
    let fromWeb = try DSHProcess.run(["-c", "show parquet \"\(penguins)\" timeout 5 \(query)"])
    let local = try DSHProcess.run(["-c", "show parquet \"Scripts/data/penguins.parquet\" \(query)"])
    #expect(fromWeb.status == 0 && fromWeb.output == local.output, "\(fromWeb.output)")
    #expect(local.output.hasPrefix("species,n,mass\nAdelie,152,"), "\(local.output)")
    let openedParquet = try DSHProcess.run(
      [penguins], input: "show penguins | limit 1 | select species as csv\n")
    #expect(openedParquet.output == "species\nAdelie\n", "\(openedParquet.output)")
    let safeParquet = try DSHProcess.run(["--safe", "-c", "show parquet \"\(penguins)\""])
    #expect(
      safeParquet.output.contains("--safe refuses the network (parquet \"\(penguins)\")"),
      "\(safeParquet.output)")
    let localTimeout = try DSHProcess.run(["-c", "show parquet \"Scripts/data/penguins.parquet\" timeout 5"])
    #expect(
      localTimeout.output.contains(
        "error: timeout limits a request: it goes with a URL (parquet \"https://…\" timeout …)"),
      "\(localTimeout.output)")
    let database = try DSHProcess.run(["\(server.base)/data/people.db"])
    #expect(database.output.contains("a database is read where it is: download it"), "\(database.output)")
  }
}

/// What a session in these tests writes, errors included.
private final class WrittenText: ScriptOutput {
  var text = ""
  func write(_ text: String) { self.text += text }
  func writeError(_ text: String) { self.text += text }
}
