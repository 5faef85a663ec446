// libFuzzer target over the lexer, the parser and the interpreter (files and the network off),
// and over the CSV and JSON readers fed the same bytes. Built by Scripts/fuzz.sh (swiftc's
// -sanitize=fuzzer); not part of the normal build.
import DataSourceKit
import DataSourceKitFiles
import DataSourceKitValues
import DataSourceScript
import Foundation

/// Runs one input three ways: as a script (lexed, parsed, and run in a sandbox that allows no
/// files, with shows cut to 50 rows and a 5-second deadline that cancels the statement, as ^C
/// would), and as the bytes of a CSV file and of a JSON file.
///
/// Numbers of any size are run: ranges too large to arrange or edit are refused with an error,
/// and a slow statement is cancelled at the deadline; one that does not stop is a finding
/// (libFuzzer's -timeout).
///
/// libFuzzer calls this on its own thread (see `fuzzMain`); the session runs on the main actor,
/// whose queue the main thread drains.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  let text = String(decoding: bytes, as: UTF8.self)
  switch ProcessInfo.processInfo.environment["DSH_FUZZ_TARGET"] {
  case "swift":
    fuzzSwiftGenerator(text)
    return 0
  case "numbers":
    fuzzNumbers(Array(bytes))
    return 0
  default: break
  }
  let copy = Data(bytes)
  _ = Parser.parse(text)
  _ = Lexer.needsContinuation(text)
  _ = runScript(text)
  let done = DispatchSemaphore(value: 0)
  Task { @MainActor in
    await readAsFiles(bytes: copy)
    done.signal()
  }
  done.wait()
  return 0
}

/// The input as a CSV file and as a JSON file, read by the providers: an error is fine, a
/// crash, a hang or a blow-up is a finding.
@MainActor
func readAsFiles(bytes: Data) async {
  let path = NSTemporaryDirectory() + "dsh-fuzz-\(getpid()).data"
  guard (try? bytes.write(to: URL(fileURLWithPath: path))) != nil else { return }
  defer { unlink(path) }
  for provider: any DataProvider<Value> in [CSVProvider(path: path), JSONProvider(path: path)] {
    guard (try? await provider.load()) != nil else { continue }
    // Read every item back, as a view would.
    for section in 0..<provider.numberOfSections {
      for row in 0..<min(provider.numberOfItems(inSection: section), 1_000) {
        _ = provider.item(at: ItemPath(item: row, section: section)).description
      }
    }
  }
}

#if FUZZING
  /// libFuzzer's driver, which parses its flags and calls the target for every input.
  @_silgen_name("LLVMFuzzerRunDriver")
  func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ target: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
  ) -> CInt

  /// The executable's entry point (SwiftPM names it after the target): hands over to libFuzzer
  /// on a thread of its own, while the main thread serves the main actor.
  @_cdecl("dsh_fuzz_main")
  public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    let arguments = FuzzerArguments(count: argc, values: argv)
    Thread.detachNewThread {
      var count = arguments.count
      var values = arguments.values
      exit(runFuzzerDriver(&count, &values, fuzzOneInput))
    }
    dispatchMain()
  }

  /// argc and argv, handed to the fuzzer's thread.
  ///
  /// `@unchecked Sendable`: the process's argument vector is written before main and never after.
  struct FuzzerArguments: @unchecked Sendable {
    var count: Int32
    var values: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
  }
#else
  /// An ordinary build (swift build) makes a program that says how to fuzz.
  @main
  enum FuzzerNotBuilt {
    static func main() { print("dsh-fuzz is built for fuzzing by Scripts/fuzz.sh SECONDS") }
  }
#endif
