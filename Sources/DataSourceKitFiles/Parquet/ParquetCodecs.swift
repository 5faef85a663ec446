import CZlib
import DataSourceKit
import DataSourceKitValues
import Foundation

// A Parquet page's bytes, decompressed whole: each page says how long it is compressed and
// how long it is after. Snappy (Parquet's usual codec) and zstd are the system's libraries,
// opened when a file first needs them (zstd by the loader .zst files use, `CompressedFile.Zstd`):
// libsnappy comes with Debian's libsnappy-dev (Scripts/setup.sh installs it), libzstd with every
// Debian system.
// gzip is zlib's, which dsh links.

enum ParquetCodecs {
  /// `count` bytes decompressed from `compressed` by `codec` into the first `count` bytes of
  /// `buffer`, which grows when it is shorter: a column's pages reuse one buffer, where a new
  /// one for each page cost the kernel a fresh page to clear for every 4 KB (a third of reading
  /// a 10M-row file).
  ///
  /// - Throws: ``DataSourceError/unreadable(path:reason:)`` naming `path`: a codec dsh does not
  ///   read, a library missing, or data that does not decompress.
  static func decompress(
    _ compressed: UnsafeRawBufferPointer, codec: Int32, count: Int, path: String, into buffer: inout [UInt8]
  ) throws(DataSourceError) {
    func failure(_ reason: String) -> DataSourceError { .unreadable(path: path, reason: reason) }
    guard count >= 0 else { throw failure("a page is shorter than nothing") }
    guard let known = ParquetCodec(rawValue: codec) else {
      throw failure("a column is compressed by codec \(codec), which Parquet does not define")
    }
    if known == .uncompressed {
      guard compressed.count == count else { throw failure("a page is not as long as its header says") }
      if buffer.count < count { buffer = [UInt8](repeating: 0, count: count) }
      buffer.withUnsafeMutableBytes { out in
        if let source = compressed.baseAddress, count > 0 {
          out.baseAddress?.copyMemory(from: source, byteCount: count)
        }
      }
      return
    }
    // A codec dsh does not read, or a library this machine lacks, is said before anything is
    // allocated.
    switch known {
    case .lzo, .brotli, .lz4, .lz4Raw:
      throw failure(
        "its columns are compressed by \(known), which dsh does not read yet (Snappy, gzip and zstd it does)")
    case .snappy where Snappy.library == nil:
      throw failure(
        "its columns are Snappy-compressed, and this machine has no libsnappy.so.1 (apt-get install libsnappy1v5)"
      )
    case .zstd where CompressedFile.Zstd.library == nil:
      throw failure("its columns are zstd-compressed, and this machine has no libzstd.so.1")
    default: break
    }
    // What a page claims it decompresses to is checked before it is allocated: a few bytes may
    // claim two gigabytes.
    let claimed: Int? =
      switch known {
      case .snappy: Snappy.library.map { $0.length(of: compressed) }
      case .zstd: CompressedFile.Zstd.library.flatMap { $0.contentSize(of: compressed) }
      default: nil
      }
    if let claimed, claimed != count {
      throw failure("a page of \(known)-compressed data is not as long as its header says")
    }
    // gzip's deflate compresses at most 1,032 to 1; zstd's frames that do not say their size, far more.
    let most = known == .gzip ? compressed.count * 1_032 + 1_024 : compressed.count * 65_536 + (1 << 20)
    guard claimed != nil || count <= most else {
      throw failure("a page of \(known)-compressed data claims more than its bytes can hold")
    }
    if buffer.count < count { buffer = [UInt8](repeating: 0, count: count) }
    let written: Int? = buffer.withUnsafeMutableBytes { whole -> Int? in
      let out = UnsafeMutableRawBufferPointer(rebasing: whole[0..<count])
      switch known {
      case .snappy: return Snappy.library?.uncompress(compressed, into: out)
      case .zstd: return CompressedFile.Zstd.library?.decompress(compressed, into: out)
      case .gzip: return inflate(compressed, into: out)
      case .uncompressed, .lzo, .brotli, .lz4, .lz4Raw: return nil
      }
    }
    guard written == count else {
      throw failure("a page of \(known)-compressed data does not decompress to the length its header gives")
    }
  }

  /// `page` compressed as a writer stores it: by Snappy, Parquet's usual codec, where this
  /// machine has libsnappy, else as it is; with the codec used.
  static func compressed(_ page: [UInt8]) -> (codec: ParquetCodec, bytes: [UInt8]) {
    if let snappy = Snappy.library, let bytes = snappy.compress(page) { return (.snappy, bytes) }
    return (.uncompressed, page)
  }

  /// Inflates gzip (or zlib) data whole into `output`; the bytes written, or `nil`.
  private static func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer)
    -> Int?
  {
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    stream.initialize(to: z_stream())
    defer { stream.deallocate() }
    // 15 + 32: a gzip or a zlib header, whichever it has.
    guard inflateInit2_(stream, 15 + 32, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
      return nil
    }
    defer { inflateEnd(stream) }
    stream.pointee.next_in = UnsafeMutablePointer(
      mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
    stream.pointee.avail_in = UInt32(input.count)
    stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
    stream.pointee.avail_out = UInt32(output.count)
    let status = CZlib.inflate(stream, Z_FINISH)
    guard status == Z_STREAM_END else { return nil }
    return output.count - Int(stream.pointee.avail_out)
  }

  /// The system's Snappy library, opened when a file first needs it.
  ///
  /// `@unchecked Sendable`: C function pointers, set once.
  private struct Snappy: @unchecked Sendable {
    typealias Uncompress =
      @convention(c) (UnsafePointer<CChar>?, Int, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<Int>) ->
      Int32
    typealias Length = @convention(c) (UnsafePointer<CChar>?, Int, UnsafeMutablePointer<Int>) -> Int32
    typealias Compress = Uncompress
    typealias MostCompressed = @convention(c) (Int) -> Int
    let uncompressRaw: Uncompress
    let uncompressedLength: Length
    let compressRaw: Compress
    let mostCompressed: MostCompressed

    static let library: Snappy? = {
      guard let handle = dlopen("libsnappy.so.1", RTLD_NOW | RTLD_LOCAL),
        let uncompress = dlsym(handle, "snappy_uncompress"),
        let length = dlsym(handle, "snappy_uncompressed_length"),
        let compress = dlsym(handle, "snappy_compress"),
        let most = dlsym(handle, "snappy_max_compressed_length")
      else { return nil }
      return Snappy(
        uncompressRaw: unsafeBitCast(uncompress, to: Uncompress.self),
        uncompressedLength: unsafeBitCast(length, to: Length.self),
        compressRaw: unsafeBitCast(compress, to: Compress.self),
        mostCompressed: unsafeBitCast(most, to: MostCompressed.self))
    }()

    /// `input` compressed, or `nil` when Snappy refuses it.
    func compress(_ input: [UInt8]) -> [UInt8]? {
      var output = [UInt8](repeating: 0, count: mostCompressed(input.count))
      var length = output.count
      let status = input.withUnsafeBytes { from in
        output.withUnsafeMutableBytes { to in
          compressRaw(
            from.baseAddress?.assumingMemoryBound(to: CChar.self), from.count,
            to.baseAddress?.assumingMemoryBound(to: CChar.self), &length)
        }
      }
      guard status == 0 else { return nil }
      output.removeSubrange(length...)
      return output
    }

    /// Decompresses `compressed` into `output`: the bytes written, or `nil`.
    func uncompress(_ compressed: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int?
    {
      var length = output.count
      let status = uncompressRaw(
        compressed.baseAddress?.assumingMemoryBound(to: CChar.self), compressed.count,
        output.baseAddress?.assumingMemoryBound(to: CChar.self), &length)
      return status == 0 ? length : nil
    }

    /// The length Snappy data says it decompresses to (-1 when its header does not read).
    func length(of compressed: UnsafeRawBufferPointer) -> Int {
      var length = 0
      let status = uncompressedLength(
        compressed.baseAddress?.assumingMemoryBound(to: CChar.self), compressed.count, &length)
      return status == 0 ? length : -1
    }
  }
}
