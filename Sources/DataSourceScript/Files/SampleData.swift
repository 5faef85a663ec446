import Foundation

/// The sample data bundled with dsh, which `samples:NAME` names from any folder: the help's
/// examples use it, so each runs wherever it is typed.
///
/// Found at `$DSH_SAMPLES`, else beside the installed binary (`PREFIX/share/dsh/samples`, where
/// Scripts/install.sh puts it), else in the source tree the binary was built in
/// (`Scripts/data`).
public enum SampleData {
  public static let prefix = "samples:"

  public static let directory: String? = {
    let fileManager = FileManager.default
    func holdsSamples(_ folder: String) -> Bool { fileManager.fileExists(atPath: folder + "/people.csv") }
    if let explicit = ProcessInfo.processInfo.environment["DSH_SAMPLES"], !explicit.isEmpty {
      return explicit
    }
    var folder = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
      .deletingLastPathComponent()
    for _ in 0..<6 {
      for candidate in ["share/dsh/samples", "Scripts/data"] {
        let path = folder.appendingPathComponent(candidate).path
        if holdsSamples(path) { return path }
      }
      folder.deleteLastPathComponent()
    }
    return nil
  }()

  /// The file a `samples:NAME` path names, or `nil` when the path is not one.
  static func resolve(_ path: String) -> String? {
    guard path.hasPrefix(prefix) else { return nil }
    var name = String(path.dropFirst(prefix.count))
    // A sample's name stays inside the samples folder.
    if name.split(separator: "/").contains("..") || name.hasPrefix("/") {
      name = "<'..' leaves the sample data>"
    }
    // Unfound samples resolve to a path that names the problem in the file error.
    return (directory ?? "<sample data not found: set DSH_SAMPLES>") + "/" + name
  }
}
