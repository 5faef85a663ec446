import CBzip2
import CZlib
import CZstd
import DataSourceKit
import DataSourceKitValues
import Foundation

/// A compressed data file (`flights.csv.gz`, `data.zip`, `rows.csv.bz2`, `rows.csv.zst`) made
/// readable as the file it holds.
///
/// The file readers read a file by its path, more than once (a column read again as text is
/// read from the file a second time), so the bytes it holds are inflated as they are read, a
/// chunk at a time, into a file of their own: memory holds a chunk, never the whole. That file
/// is unlinked as soon as it is made on Linux and read through `/proc/self/fd`, so it goes when
/// the load is over (or with dsh, however it ends). The kind is told by the first bytes, not the name: a `.gz`
/// that is plain text is read as it is.
///
/// A file that inflates beyond ``maximumInflatedBytes`` — a bomb, or more than dsh reads — stops
/// there with an error that says so.
///
/// zip archives are read here with zlib rather than through a zip library: the one available
/// (ZIPFoundation) declares a `CZlib` module of its own, which clashes with this one, and a data
/// file needs only the central directory, stored and deflated members.
public final class CompressedFile {
  /// How a file's bytes are packed.
  enum Kind: Equatable {
    case gzip
    case zip
    case bzip2
    case zstd
  }

  /// The most a compressed file inflates to unless told otherwise: 2 GiB, as large as a CSV
  /// file dsh reads.
  public static let maximumInflatedBytes = Int(UInt32.max >> 1)

  /// The path the file readers open.
  let path: String
  /// The member of an archive that was read, when it was one.
  let member: String?
  private let descriptor: Int32?

  private init(path: String, member: String?, descriptor: Int32?) {
    self.path = path
    self.member = member
    self.descriptor = descriptor
  }

  deinit {
    if let descriptor { close(descriptor) }
  }

  /// The kind of the file at `path`, from its first bytes; `nil` for a file that is not
  /// compressed (or cannot be opened: the reader then says why).
  static func kind(ofFileAt path: String) -> Kind? {
    let fd = open(path, O_RDONLY | O_NONBLOCK)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
    var magic = [UInt8](repeating: 0, count: 4)
    guard pread(fd, &magic, 4, 0) == 4 else { return nil }
    switch (magic[0], magic[1], magic[2], magic[3]) {
    case (0x1F, 0x8B, _, _): return .gzip
    case (0x50, 0x4B, 0x03, 0x04), (0x50, 0x4B, 0x05, 0x06): return .zip
    case (0x42, 0x5A, 0x68, 0x31...0x39): return .bzip2
    case (0x28, 0xB5, 0x2F, 0xFD): return .zstd
    // A skippable frame first (magic 0x184D2A50 to 0x184D2A5F), as tools that put metadata
    // before the data write: still zstd, whose reader skips it.
    case (0x50...0x5F, 0x2A, 0x4D, 0x18): return .zstd
    default: return nil
    }
  }

  /// The file `path` holds, inflated, or `nil` when it is not compressed.
  ///
  /// - Parameters:
  ///   - member: the file of a zip archive to read; without it an archive must hold one file.
  ///   - access: which files may be read, checked on the compressed file.
  /// - Throws: ``DataSourceError`` naming `displayPath`: data that does not inflate, an archive
  ///   without the member (saying which it holds), a file past the limit, or cancellation.
  static func inflated(
    _ path: String, displayPath: String, member: String?, limit: Int?, progress: LoadProgress?,
    access: FileAccess?
  ) throws -> CompressedFile? {
    guard let kind = kind(ofFileAt: path) else {
      if let member {
        throw DataSourceError.unreadable(
          path: displayPath, reason: "it is not a zip archive, so it has no member \"\(member)\"")
      }
      return nil
    }
    let input = try OpenFile(path, displayPath: displayPath, access: access)
    let output = try ScratchFile(
      displayPath: displayPath, limit: min(limit ?? maximumInflatedBytes, maximumInflatedBytes))
    var readMember: String?
    switch kind {
    case .gzip:
      if let member {
        throw DataSourceError.unreadable(
          path: displayPath, reason: "a gzip file holds one file, not members: leave out member \"\(member)\""
        )
      }
      try inflate(
        from: input.descriptor, range: 0..<input.size, windowBits: 15 + 16, into: output, progress: progress)
    case .zip:
      let entry = try ZipDirectory(input, displayPath: displayPath).entry(named: member)
      readMember = entry.name
      output.keepChecksum()
      try copyMember(entry, of: input, into: output, displayPath: displayPath, progress: progress)
    case .bzip2:
      if let member {
        throw DataSourceError.unreadable(
          path: displayPath,
          reason: "a bzip2 file holds one file, not members: leave out member \"\(member)\"")
      }
      try decompressBzip2(from: input.descriptor, size: input.size, into: output, progress: progress)
    case .zstd:
      if let member {
        throw DataSourceError.unreadable(
          path: displayPath, reason: "a zstd file holds one file, not members: leave out member \"\(member)\""
        )
      }
      guard let zstd = Zstd.library else {
        throw DataSourceError.unreadable(
          path: displayPath,
          reason: "it is zstd-compressed, and this machine has no libzstd.so.1; decompress it first (zstd -d)"
        )
      }
      try zstd.decompress(from: input.descriptor, size: input.size, into: output, progress: progress)
    }
    let (openPath, kept) = output.finish()
    return CompressedFile(path: openPath, member: readMember, descriptor: kept)
  }

  // MARK: Inflating

  /// The buffers a decompressor reads the file into and writes from, and how far through its
  /// bytes it has read.
  private final class Pieces {
    static let inputSize = 1 << 18
    static let outputSize = 1 << 20
    let input = UnsafeMutableRawPointer.allocate(byteCount: inputSize, alignment: 16)
    let output = UnsafeMutableRawPointer.allocate(byteCount: outputSize, alignment: 16)
    private let fd: Int32
    private var offset: Int
    private let end: Int
    private let progress: LoadProgress?

    /// Pieces of the bytes `range` of `fd`.
    init(of fd: Int32, range: Range<Int>, progress: LoadProgress?) {
      self.fd = fd
      offset = range.lowerBound
      end = range.upperBound
      self.progress = progress
    }

    deinit {
      input.deallocate()
      output.deallocate()
    }

    /// Whether every byte has been read.
    var atEnd: Bool { offset >= end }

    /// Reads the next piece into `input`: its byte count, 0 at the end (or when the file ends
    /// early: the decompressor then finds its data cut short).
    func read() throws -> Int {
      while offset < end {
        let count = pread(fd, input, min(Self.inputSize, end - offset), off_t(offset))
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { return 0 }
        offset += count
        progress?.add(bytes: count)
        if Task.isCancelled { throw DataSourceError.cancelled }
        return count
      }
      return 0
    }

    /// Appends the first `count` bytes of `output` to `file`.
    ///
    /// ^C is heard after each: a few kilobytes of bzip2 make gigabytes, so reads alone come too
    /// seldom.
    func write(_ count: Int, to file: ScratchFile) throws {
      try file.write(output, count: count)
      if Task.isCancelled { throw DataSourceError.cancelled }
    }
  }

  /// The error for compressed data that does not decompress (`said`: the library's reason).
  private static func damaged(_ output: ScratchFile, _ said: String) -> DataSourceError {
    .unreadable(
      path: output.displayPath,
      reason: "its compressed data is damaged (\(said)) after \(output.count) bytes of what it holds")
  }

  /// The error for compressed data that stops in the middle.
  private static func cutShort(_ output: ScratchFile) -> DataSourceError {
    .unreadable(
      path: output.displayPath, reason: "it ends before its compressed data does: a file cut short?")
  }

  /// Inflates the bytes `range` of `fd` into `output`: a gzip file (every member, as `gzip -dc`
  /// reads a file of several) with `windowBits` 15 + 16, a zip member's raw deflate with -15.
  private static func inflate(
    from fd: Int32, range: Range<Int>, windowBits: Int32, into output: ScratchFile, progress: LoadProgress?
  ) throws {
    // On the heap: zlib checks on every call that the stream is where it was started.
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    stream.initialize(to: z_stream())
    guard inflateInit2_(stream, windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
      stream.deallocate()
      throw DataSourceError.unreadable(path: output.displayPath, reason: "zlib could not start")
    }
    defer {
      inflateEnd(stream)
      stream.deallocate()
    }
    let pieces = Pieces(of: fd, range: range, progress: progress)
    var ended = false
    while !pieces.atEnd || stream.pointee.avail_in > 0 {
      if stream.pointee.avail_in == 0 {
        let count = try pieces.read()
        guard count > 0 else { break }
        stream.pointee.next_in = pieces.input.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = UInt32(count)
      }
      // A gzip file may be several members one after another: each ends its stream, and the
      // next starts afresh (trailing zeros, which some tools pad with, end it).
      if ended {
        if stream.pointee.next_in.pointee == 0 { break }
        guard inflateReset(stream) == Z_OK else { break }
        ended = false
      }
      repeat {
        stream.pointee.next_out = pieces.output.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = UInt32(Pieces.outputSize)
        let status = CZlib.inflate(stream, Z_NO_FLUSH)
        try pieces.write(Pieces.outputSize - Int(stream.pointee.avail_out), to: output)
        switch status {
        case Z_STREAM_END:
          ended = true
        case Z_OK, Z_BUF_ERROR:
          break
        default:
          throw damaged(output, stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)")
        }
      } while stream.pointee.avail_out == 0 && !ended
    }
    guard ended else { throw cutShort(output) }
  }

  /// Decompresses a bzip2 file into `output`: every stream, as `bzip2 -dc` reads a file of
  /// several (what parallel compressors write); bytes after the last that start no stream are
  /// ignored, as bzip2 ignores them.
  private static func decompressBzip2(
    from fd: Int32, size: Int, into output: ScratchFile, progress: LoadProgress?
  ) throws {
    // On the heap: libbz2 checks on every call that the stream is where it was started.
    let stream = UnsafeMutablePointer<bz_stream>.allocate(capacity: 1)
    stream.initialize(to: bz_stream())
    guard BZ2_bzDecompressInit(stream, 0, 0) == BZ_OK else {
      stream.deallocate()
      throw DataSourceError.unreadable(path: output.displayPath, reason: "libbz2 could not start")
    }
    defer {
      BZ2_bzDecompressEnd(stream)
      stream.deallocate()
    }
    let pieces = Pieces(of: fd, range: 0..<size, progress: progress)
    var ended = false
    // Whether the stream being read came after another, and what it has given: a later
    // "stream" that is not bzip2 from its first byte is trailing garbage, not damage.
    var isLaterStream = false
    var streamOutput = 0
    reading: while !pieces.atEnd || stream.pointee.avail_in > 0 {
      if stream.pointee.avail_in == 0 {
        let count = try pieces.read()
        guard count > 0 else { break }
        stream.pointee.next_in = pieces.input.assumingMemoryBound(to: CChar.self)
        stream.pointee.avail_in = UInt32(count)
      }
      if ended {
        // Another stream starts here, or the bytes left are not bzip2 and end the file.
        guard stream.pointee.next_in.pointee == CChar(UInt8(ascii: "B")) else { break }
        BZ2_bzDecompressEnd(stream)
        let (next, left) = (stream.pointee.next_in, stream.pointee.avail_in)
        stream.pointee = bz_stream()
        guard BZ2_bzDecompressInit(stream, 0, 0) == BZ_OK else {
          throw DataSourceError.unreadable(path: output.displayPath, reason: "libbz2 could not start")
        }
        (stream.pointee.next_in, stream.pointee.avail_in) = (next, left)
        (ended, isLaterStream, streamOutput) = (false, true, 0)
      }
      repeat {
        stream.pointee.next_out = pieces.output.assumingMemoryBound(to: CChar.self)
        stream.pointee.avail_out = UInt32(Pieces.outputSize)
        let status = BZ2_bzDecompress(stream)
        let produced = Pieces.outputSize - Int(stream.pointee.avail_out)
        try pieces.write(produced, to: output)
        streamOutput += produced
        switch status {
        case BZ_STREAM_END:
          ended = true
        case BZ_OK:
          break
        case BZ_DATA_ERROR_MAGIC where isLaterStream && streamOutput == 0:
          // Bytes after the last stream that merely start with its first letter.
          ended = true
          break reading
        default:
          let said =
            switch status {
            case BZ_DATA_ERROR_MAGIC: "not bzip2 data"
            case BZ_DATA_ERROR: "a block or its checksum does not match"
            case BZ_MEM_ERROR: "out of memory"
            default: "bzip2 error \(status)"
            }
          throw damaged(output, said)
        }
      } while stream.pointee.avail_out == 0 && !ended
    }
    guard ended else { throw cutShort(output) }
  }

  /// The system's zstd library, opened when a .zst file (or a Parquet file's zstd page) is first
  /// read (see `CZstd/shim.h`).
  ///
  /// `@unchecked Sendable`: C function pointers, set once.
  struct Zstd: @unchecked Sendable {
    typealias Create = @convention(c) () -> OpaquePointer?
    typealias Free = @convention(c) (OpaquePointer?) -> Int
    typealias Decompress =
      @convention(c) (OpaquePointer?, UnsafeMutablePointer<dsh_zstd_out>, UnsafeMutablePointer<dsh_zstd_in>)
      -> Int
    typealias IsError = @convention(c) (Int) -> UInt32
    typealias ErrorName = @convention(c) (Int) -> UnsafePointer<CChar>?
    typealias DecompressBuffer = @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeRawPointer?, Int) -> Int
    typealias ContentSize = @convention(c) (UnsafeRawPointer?, Int) -> UInt64

    let create: Create
    let free: Free
    let decompressStream: Decompress
    let isError: IsError
    let errorName: ErrorName
    /// One frame held whole, decompressed in one call (a Parquet page).
    let decompressBuffer: DecompressBuffer
    let frameContentSize: ContentSize

    /// `nil` when the library or one of its functions is missing.
    static let library: Zstd? = {
      guard let handle = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL) else { return nil }
      func function<F>(_ name: String, as type: F.Type) -> F? {
        dlsym(handle, name).map { unsafeBitCast($0, to: type) }
      }
      guard let create = function("ZSTD_createDStream", as: Create.self),
        let free = function("ZSTD_freeDStream", as: Free.self),
        let decompressStream = function("ZSTD_decompressStream", as: Decompress.self),
        let isError = function("ZSTD_isError", as: IsError.self),
        let errorName = function("ZSTD_getErrorName", as: ErrorName.self),
        let decompressBuffer = function("ZSTD_decompress", as: DecompressBuffer.self),
        let frameContentSize = function("ZSTD_getFrameContentSize", as: ContentSize.self)
      else { return nil }
      return Zstd(
        create: create, free: free, decompressStream: decompressStream, isError: isError,
        errorName: errorName,
        decompressBuffer: decompressBuffer, frameContentSize: frameContentSize)
    }()

    /// The size a frame held in `compressed` says it decompresses to; `nil` when it does not say
    /// (or is no frame: decompressing it then fails).
    func contentSize(of compressed: UnsafeRawBufferPointer) -> Int? {
      let size = frameContentSize(compressed.baseAddress, compressed.count)
      // ZSTD_CONTENTSIZE_UNKNOWN and ZSTD_CONTENTSIZE_ERROR are the two largest values.
      return size >= UInt64.max - 1 || size > UInt64(Int.max) ? nil : Int(size)
    }

    /// Decompresses the frame in `compressed` into `output`: the bytes written, or `nil`.
    func decompress(_ compressed: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int?
    {
      let result = decompressBuffer(
        output.baseAddress, output.count, compressed.baseAddress, compressed.count)
      return isError(result) != 0 ? nil : result
    }

    /// Decompresses a zstd file into `output`: every frame, as `zstd -dc` reads a file of
    /// several (skippable frames skipped).
    func decompress(from fd: Int32, size: Int, into output: ScratchFile, progress: LoadProgress?) throws {
      guard let stream = create() else {
        throw DataSourceError.unreadable(path: output.displayPath, reason: "libzstd could not start")
      }
      defer { _ = free(stream) }
      let pieces = Pieces(of: fd, range: 0..<size, progress: progress)
      var input = dsh_zstd_in(src: pieces.input, size: 0, pos: 0)
      // 0 once a frame is decoded and flushed whole: a file that ends elsewhere is cut short.
      var lastResult = 0
      var sawInput = false
      var outputFull = false
      while true {
        // More input once this is used up and nothing is held back: a full output buffer may
        // hold back more of what the input already gave.
        if input.pos == input.size, !outputFull {
          let count = try pieces.read()
          guard count > 0 else { break }
          input = dsh_zstd_in(src: pieces.input, size: count, pos: 0)
          sawInput = true
        }
        var out = dsh_zstd_out(dst: pieces.output, size: Pieces.outputSize, pos: 0)
        let result = decompressStream(stream, &out, &input)
        if isError(result) != 0 {
          throw CompressedFile.damaged(output, errorName(result).map { String(cString: $0) } ?? "zstd error")
        }
        try pieces.write(out.pos, to: output)
        lastResult = result
        outputFull = out.pos == out.size
      }
      guard sawInput, lastResult == 0 else { throw CompressedFile.cutShort(output) }
    }
  }

  private static func copyMember(
    _ entry: ZipDirectory.Entry, of input: OpenFile, into output: ScratchFile, displayPath: String,
    progress: LoadProgress?
  ) throws {
    // An encrypted member's bytes are ciphertext: read as text they would be "not UTF-8".
    if entry.flags & 1 != 0 {
      throw DataSourceError.unreadable(
        path: displayPath,
        reason:
          "its member \"\(entry.name)\" is encrypted (a zip with a password); dsh does not read encrypted members: unzip it with its password first"
      )
    }
    let start = try entry.dataOffset(in: input, displayPath: displayPath)
    let range = start..<start + entry.compressedSize
    guard range.upperBound <= input.size else {
      throw DataSourceError.unreadable(
        path: displayPath, reason: "its member \"\(entry.name)\" runs past its end")
    }
    switch entry.method {
    case 8:
      try inflate(from: input.descriptor, range: range, windowBits: -15, into: output, progress: progress)
    case 0:
      let pieces = Pieces(of: input.descriptor, range: range, progress: progress)
      while true {
        let count = try pieces.read()
        guard count > 0 else { break }
        try output.write(pieces.input, count: count)
      }
    default:
      throw DataSourceError.unreadable(
        path: displayPath,
        reason:
          "its member \"\(entry.name)\" is packed by method \(entry.method); dsh reads stored and deflated members"
      )
    }
    // What unzip checks: the bytes read are the bytes the archive was made of (a changed byte of
    // a stored member, or of a deflated one that still inflates, would otherwise read as data).
    if output.count != entry.size {
      throw DataSourceError.unreadable(
        path: displayPath,
        reason:
          "its member \"\(entry.name)\" holds \(output.count) bytes where its directory says \(entry.size): the archive is damaged"
      )
    }
    if let crc = output.checksum, crc != entry.crc {
      throw DataSourceError.unreadable(
        path: displayPath,
        reason: "its member \"\(entry.name)\" fails its CRC-32 check: the archive is damaged")
    }
  }
}
