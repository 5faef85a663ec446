import DataSourceScript
import Foundation
import Testing

/// The language of pictures: table styles, appearance and device, and their errors.
@MainActor
@Suite("Picture settings")
struct PictureSettingsTests {
  private func session() async -> Session {
    await run("let p = csv \"Scripts/data/people.csv\" key id | sort by name").session
  }

  private func printed(_ text: String, in session: Session) async -> (text: String, errors: String) {
    guard let output = session.output as? CapturedOutput else { return ("", "no captured output") }
    let (textStart, errorStart) = (output.text.count, output.errors.count)
    _ = await run(text, in: session)
    return (String(output.text.dropFirst(textStart)), String(output.errors.dropFirst(errorStart)))
  }

  @Test("a table's style, the appearance and the device reach the page")
  func settingsReachThePage() async {
    let session = await session()
    let plain = await printed("show table p | limit 1 with cell basic \"{name}\" as html", in: session)
    #expect(plain.text.contains("<div class=\"table plain\">") && plain.text.contains("width: 393px"))
    #expect(plain.text.contains("<body class=\"light\">"))
    let styled = await printed(
      """
      set appearance dark
      set device "iPhone SE"
      let t = table p | limit 1 with cell basic "{name}" style insetGrouped | header "People"
      show t as html
      """, in: session)
    #expect(styled.errors.isEmpty, "\(styled.errors)")
    #expect(styled.text.contains("<div class=\"table insetGrouped\">"))
    #expect(styled.text.contains("width: 375px") && styled.text.contains("<body class=\"dark\">"))
    // A decorator or a composition keeps the style its table asked for.
    let composed = await printed("show compose t, (table [1] with cell basic \"{.}\") as svg", in: session)
    #expect(composed.text.hasPrefix("<svg ") && composed.text.contains("width=\"375\""))
    #expect(composed.text.contains(">PEOPLE</text>"))  // grouped headers are small capitals
    let settings = await printed("set", in: session)
    #expect(settings.text.contains("appearance  dark\ndevice      iPhone SE (375 points)\n"))
  }

  @Test(
    "wrong styles, devices and appearances are errors at their place",
    arguments: [
      (
        "show table p with cell basic \"{name}\" style insetgrouped",
        "test.dsh:1:45: error: unknown table style 'insetgrouped'; did you mean 'insetGrouped'?"
      ),
      (
        "show table p with cell basic \"{name}\" style",
        "test.dsh:1:44: error: expected a table style after 'style'; styles: plain, grouped, insetGrouped"
      ),
      (
        "show compose (table p with cell basic \"{name}\" style grouped), (table [1] with cell basic \"{.}\" style plain)",
        "test.dsh:1:65: error: this table asks for style plain, but 'table p with cell basic \"{name}\" style grouped' asks for grouped: one table view draws a composition, so give them the same style"
      ),
      (
        "set device iPhone14",
        "test.dsh:1:12: error: 'iPhone14' is not a value for device; expected a device: iPhoneSE, iPhone15 or iPad"
      ),
      (
        "set appearance sepia",
        "test.dsh:1:16: error: 'sepia' is not a value for appearance; expected light or dark"
      ),
    ])
  func errors(statement: String, message: String) async {
    let session = await session()
    let result = await printed(statement, in: session)
    #expect(result.text.isEmpty)
    #expect(result.errors.hasPrefix(message), "\(result.errors)")
  }

  @Test("save keeps the picture settings, and a saved script draws the same page")
  func saveKeepsSettings() async throws {
    let folder = NSTemporaryDirectory() + "dsh-pictures-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let session = await session()
    let view = "let t = table p | limit 2 with cell value1 \"{name}\" detail \"{team}\" style grouped"
    let before = await printed(
      "set appearance dark\nset device ipad\n\(view)\nsave \"\(folder)/s.dsh\"\nshow t as html", in: session)
    #expect(before.errors.isEmpty, "\(before.errors)")
    let script = try String(contentsOfFile: folder + "/s.dsh", encoding: .utf8)
    #expect(script.contains("set appearance dark\nset device iPad\n"))
    let fresh = await run("source \"\(folder)/s.dsh\"\nshow t as html")
    #expect(fresh.ok, "\(fresh.output.errors)")
    let page = String(before.text.drop { $0 != "<" })
    #expect(fresh.output.text.hasSuffix(page))
  }
}
