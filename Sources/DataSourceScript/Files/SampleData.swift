import Foundation

/// The sample data bundled with dsh, which `samples:NAME` names from any folder: the help's
/// examples use it, so each runs wherever it is typed.
///
/// Found at `$DSH_SAMPLES`, else beside the installed binary (`PREFIX/share/dsh/samples`, where
/// Scripts/install.sh puts it), else in the source tree the binary was built in
/// (`Scripts/data`). The binary is the running executable's real file (`/proc/self/exe`), not
/// `argv[0]`: a `dsh` run by name from `PATH` has no folder in its `argv[0]`.
public enum SampleData {
  public static let prefix = "samples:"

  public static let directory: String? = {
    let fileManager = FileManager.default
    func holdsSamples(_ folder: String) -> Bool { fileManager.fileExists(atPath: folder + "/people.csv") }
    if let explicit = ProcessInfo.processInfo.environment["DSH_SAMPLES"], !explicit.isEmpty {
      return explicit
    }
    var folder = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0..<6 {
      for candidate in ["share/dsh/samples", "Scripts/data"] {
        let path = folder.appendingPathComponent(candidate).path
        if holdsSamples(path) { return path }
      }
      folder.deleteLastPathComponent()
    }
    return nil
  }()

  /// The running executable's path: the kernel's link to it where there is one, else what the
  /// bundle knows, else `argv[0]`.
  static let executable: String = {
    if let real = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return real }
    return Bundle.main.executablePath ?? CommandLine.arguments.first ?? ""
  }()

  /// Where the samples were looked for, in words, for the error when they are not found.
  static var placesLooked: String {
    let folder = (executable as NSString).deletingLastPathComponent
    let parent = (folder as NSString).deletingLastPathComponent
    return
      "DSH_SAMPLES is not set, and neither \(parent)/share/dsh/samples nor Scripts/data in a folder above \(folder) holds it"
  }

  /// The file a `samples:NAME` path names, or `nil` when the path is not one.
  static func resolve(_ path: String) -> String? {
    guard path.hasPrefix(prefix) else { return nil }
    var name = String(path.dropFirst(prefix.count))
    // A sample's name stays inside the samples folder.
    if name.split(separator: "/").contains("..") || name.hasPrefix("/") {
      name = "<'..' leaves the sample data>"
    }
    // Unfound samples resolve to a path no file has: the error says where they were looked for.
    return (directory ?? "<sample data not found>") + "/" + name
  }
}
