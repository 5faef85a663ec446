// libFuzzer target over the lexer, the parser and the interpreter, with files and the network
// off. Built by Scripts/fuzz.sh (swiftc's -sanitize=fuzzer); not part of the normal build.
import DataSourceKit
import DataSourceScript
import Foundation

final class DiscardedOutput: ScriptOutput {
  func write(_ text: String) {}
  func writeError(_ text: String) {}
}

/// Runs one input: lexed and parsed always; interpreted when it asks for no huge range (a
/// billion rows is a slow input, not a bug), in a sandbox that allows no files.
///
/// libFuzzer calls this on its own thread (see `fuzzMain`); the session runs on the main actor,
/// whose queue the main thread drains.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  _ = Parser.parse(text)
  _ = Lexer.needsContinuation(text)
  let hasHugeNumber = text.split(whereSeparator: { !$0.isNumber }).contains { $0.count > 5 }
  guard !hasHugeNumber else { return 0 }
  let done = DispatchSemaphore(value: 0)
  Task { @MainActor in
    var environment = Environment.batch
    environment.sandbox = Sandbox(allowedFiles: [], allowedFolder: nil)
    let session = Session(environment: environment, output: DiscardedOutput())
    await session.run(SourceFile(name: "fuzz.dsh", text: text))
    done.signal()
  }
  done.wait()
  return 0
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
