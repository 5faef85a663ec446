import DataSourceKit
import DataSourceKitValues
import Foundation

// The encodings of a Parquet page's values and levels: PLAIN, the RLE/bit-packed hybrid
// (definition levels, dictionary indices, booleans), DELTA_BINARY_PACKED and the two delta
// encodings of byte arrays built on it, and BYTE_STREAM_SPLIT. Each reads from a page's bytes
// and refuses, rather than reads past, bytes that end too soon.

/// Bytes of a page being decoded, read from a position on.
struct PageBytes {
  let bytes: UnsafeRawBufferPointer
  var position = 0
  /// The error for bytes that end too soon or do not decode.
  let damaged: () -> DataSourceError

  init(_ bytes: UnsafeRawBufferPointer, damaged: @escaping () -> DataSourceError) {
    self.bytes = bytes
    self.damaged = damaged
  }

  var remaining: Int { bytes.count - position }

  /// The next `count` bytes.
  mutating func take(_ count: Int) throws(DataSourceError) -> UnsafeRawBufferPointer {
    guard count >= 0, count <= remaining else { throw damaged() }
    defer { position += count }
    return UnsafeRawBufferPointer(rebasing: bytes[position..<position + count])
  }

  mutating func byte() throws(DataSourceError) -> UInt8 { try take(1)[0] }

  /// A little-endian value of `count` bytes (at most eight).
  mutating func littleEndian(_ count: Int) throws(DataSourceError) -> UInt64 {
    let raw = try take(count)
    var value: UInt64 = 0
    for k in (0..<count).reversed() { value = value << 8 | UInt64(raw[k]) }
    return value
  }

  mutating func varint() throws(DataSourceError) -> UInt64 {
    guard let value = Varint.read(bytes, at: &position) else { throw damaged() }
    return value
  }

  mutating func zigzag() throws(DataSourceError) -> Int64 { Varint.zigzag(try varint()) }

  /// `count` values of `width` bits each, packed from the lowest bit of each byte up; only the
  /// first `kept` of them are added to `values` (all when `nil`), the rest only passed over.
  ///
  /// What is added is never more than the caller asked for: a run of width 0 takes no bytes, so
  /// a count read from damaged bytes could otherwise ask for billions of zeros.
  mutating func unpack(_ count: Int, width: Int, into values: inout [UInt64], keeping kept: Int? = nil)
    throws(DataSourceError)
  {
    guard count >= 0, width >= 0, width <= 64 else { throw damaged() }
    let added = min(count, kept ?? count)
    guard width > 0 else {
      values.append(contentsOf: repeatElement(0, count: added))
      return
    }
    let packed = try take((count * width + 7) / 8)
    let mask: UInt64 = width == 64 ? .max : (1 << UInt64(width)) - 1
    /// Eight bytes from `byte` on, zeros past the end.
    func word(_ byte: Int) -> UInt64 {
      if byte + 8 <= packed.count { return packed.loadUnaligned(fromByteOffset: byte, as: UInt64.self) }
      var value: UInt64 = 0
      var k = min(packed.count, byte + 8) - 1
      while k >= byte {
        value = value << 8 | UInt64(packed[k])
        k -= 1
      }
      return value
    }
    let start = values.count
    values.append(contentsOf: repeatElement(0, count: added))
    // A value of at most 56 bits lies in the eight bytes from its first: those whose eight bytes
    // are all in the packed bytes are read by one load each, with no test.
    let direct = width <= 56 && packed.count >= 8 ? min(added, (packed.count - 8) * 8 / width + 1) : 0
    values.withUnsafeMutableBufferPointer { out in
      if width <= 8 {
        // Eight values of at most 8 bits are the eight bytes from `8 × width` bits on: one load
        // for eight values (a dictionary's codes, most often).
        let octets = direct / 8
        for octet in 0..<octets {
          let word = packed.loadUnaligned(fromByteOffset: octet * width, as: UInt64.self)
          let base = start + octet * 8
          for j in 0..<8 { out[base + j] = word >> UInt64(j * width) & mask }
        }
        for i in octets * 8..<direct {
          let bit = i * width
          out[start + i] =
            packed.loadUnaligned(fromByteOffset: bit >> 3, as: UInt64.self) >> UInt64(bit & 7) & mask
        }
      } else {
        for i in 0..<direct {
          let bit = i * width
          out[start + i] =
            packed.loadUnaligned(fromByteOffset: bit >> 3, as: UInt64.self) >> UInt64(bit & 7) & mask
        }
      }
      for i in direct..<added {
        let bit = i * width
        let (byte, shift) = (bit >> 3, UInt64(bit & 7))
        var value = word(byte) >> shift
        // A value that reaches past the first word's end takes its high bits from the next byte.
        if shift > 0, Int(shift) + width > 64 { value |= word(byte + 8) << (64 - shift) }
        out[start + i] = value & mask
      }
    }
  }

  /// `count` values of the RLE/bit-packed hybrid of `width` bits, to the end of these bytes.
  mutating func hybrid(_ count: Int, width: Int) throws(DataSourceError) -> [UInt64] {
    guard width >= 0, width <= 64 else { throw damaged() }
    var values: [UInt64] = []
    // Reserved as the bytes allow at most (eight values a byte), grown past that by runs.
    values.reserveCapacity(min(count, remaining * 8 + 8))
    while values.count < count {
      let header = try varint()
      let runs = Int(truncatingIfNeeded: header >> 1)
      guard runs >= 0, runs <= Int(UInt32.max) else { throw damaged() }
      if header & 1 == 0 {
        // A run of one value, written in as many whole bytes as its width needs.
        let value = try littleEndian((width + 7) / 8)
        guard width == 64 || value >> UInt64(width) == 0 else { throw damaged() }
        values.append(contentsOf: repeatElement(value, count: min(runs, count - values.count)))
      } else {
        // Groups of eight values bit-packed; the last group may run past the values wanted.
        try unpack(runs * 8, width: width, into: &values, keeping: count - values.count)
      }
    }
    return values
  }

  /// `count` values of DELTA_BINARY_PACKED (at most as many as the block header says).
  mutating func deltaBinaryPacked(_ count: Int) throws(DataSourceError) -> [Int64] {
    let blockSize = Int(truncatingIfNeeded: try varint())
    let miniblocks = Int(truncatingIfNeeded: try varint())
    let total = Int(truncatingIfNeeded: try varint())
    var last = try zigzag()
    // Blocks of at most 64K values (writers use 128), and no more values than the page asked
    // for: a miniblock of width 0 takes no bytes, so a damaged count could not be run out of.
    guard blockSize > 0, blockSize <= 1 << 16, miniblocks > 0, blockSize % miniblocks == 0, total >= 0,
      total <= count
    else { throw damaged() }
    let perMiniblock = blockSize / miniblocks
    var values: [Int64] = []
    values.reserveCapacity(min(total, remaining * 8 + blockSize))
    if total > 0 { values.append(last) }
    var unpacked: [UInt64] = []
    while values.count < total {
      let minimum = try zigzag()
      let widths = try take(miniblocks)
      for m in 0..<miniblocks where values.count < total {
        unpacked.removeAll(keepingCapacity: true)
        try unpack(perMiniblock, width: Int(widths[m]), into: &unpacked)
        for delta in unpacked where values.count < total {
          last = last &+ minimum &+ Int64(bitPattern: delta)
          values.append(last)
        }
      }
    }
    guard values.count >= count else { throw damaged() }
    return Array(values.prefix(count))
  }
}

/// The values of one page or of a dictionary, in the form of their physical type.
enum PhysicalValues {
  case bools([UInt8])
  case ints([Int64])
  case doubles([Double])
  /// Byte arrays one after another: value `i` is `bytes[ends[i - 1]..<ends[i]]`.
  case byteArrays(bytes: [UInt8], ends: [Int])

  var count: Int {
    switch self {
    case .bools(let values): values.count
    case .ints(let values): values.count
    case .doubles(let values): values.count
    case .byteArrays(_, let ends): ends.count
    }
  }

  /// The values at `indices` (a dictionary's entries a page names).
  func picking(_ indices: [UInt64], damaged: () -> DataSourceError) throws(DataSourceError) -> PhysicalValues
  {
    /// The entries at `indices`, in one pass that checks each index too.
    func picked<T>(_ values: [T]) throws(DataSourceError) -> [T] {
      // The greatest index first (a pass without a branch), then each entry read unchecked.
      guard indices.reduce(0, { Swift.max($0, $1) }) < UInt64(values.count) || indices.isEmpty else {
        throw damaged()
      }
      return values.withUnsafeBufferPointer { entries in
        [T](unsafeUninitializedCapacity: indices.count) { out, made in
          guard let base = entries.baseAddress, let into = out.baseAddress else { return }
          for (k, index) in indices.enumerated() { (into + k).initialize(to: base[Int(index)]) }
          made = indices.count
        }
      }
    }
    switch self {
    case .bools(let values): return .bools(try picked(values))
    case .ints(let values): return .ints(try picked(values))
    case .doubles(let values): return .doubles(try picked(values))
    case .byteArrays(let bytes, let ends):
      guard indices.allSatisfy({ $0 < UInt64(count) }) else { throw damaged() }
      // A dictionary's long entry named a million times is built a million times: no more than
      // a column's texts may hold.
      var total = 0
      for index in indices {
        let i = Int(index)
        total += ends[i] - (i == 0 ? 0 : ends[i - 1])
        guard total <= Int(UInt32.max) else { throw damaged() }
      }
      var picked: [UInt8] = []
      picked.reserveCapacity(total)
      var pickedEnds: [Int] = []
      pickedEnds.reserveCapacity(indices.count)
      for index in indices {
        let i = Int(index)
        picked.append(contentsOf: bytes[(i == 0 ? 0 : ends[i - 1])..<ends[i]])
        pickedEnds.append(picked.count)
      }
      return .byteArrays(bytes: picked, ends: pickedEnds)
    }
  }
}

extension PageBytes {
  /// A 32-bit float as the double of the decimal it prints as (43.22, not 43.220001220703125):
  /// what DuckDB and pandas show of a FLOAT, and what `== 43.22` finds.
  ///
  /// The decimal (at most nine digits) is read back by Clinger's fast path, one correctly rounded
  /// multiplication or division of exact doubles, where `strtod` took a third of reading a column
  /// of floats; a decimal past its reach (an exponent past 22) goes to `strtod`.
  static func double(_ float: Float) -> Double {
    guard float.isFinite, float != 0 else { return Double(float) }
    var text = float.description
    return text.withUTF8 { decimal($0) } ?? Double(text) ?? Double(float)
  }

  /// The powers of ten a double holds exactly.
  private static let exactPowers: [Double] = (0...22).map { (0..<$0).reduce(1.0) { value, _ in value * 10 } }

  /// The double nearest a decimal written `-12.345e-6`, when its digits and exponent are within
  /// Clinger's fast path (at most 15 digits, a power of ten of at most 22); else `nil`.
  static func decimal(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
    var i = 0
    let negative = text.first == UInt8(ascii: "-")
    if negative { i = 1 }
    var (digits, count, exponent) = (UInt64(0), 0, 0)
    func isDigit(_ at: Int) -> Bool {
      at < text.count && text[at] >= UInt8(ascii: "0") && text[at] <= UInt8(ascii: "9")
    }
    while isDigit(i) {
      digits = digits &* 10 &+ UInt64(text[i] - UInt8(ascii: "0"))
      (count, i) = (count + 1, i + 1)
    }
    if i < text.count, text[i] == UInt8(ascii: ".") {
      i += 1
      while isDigit(i) {
        digits = digits &* 10 &+ UInt64(text[i] - UInt8(ascii: "0"))
        (count, exponent, i) = (count + 1, exponent - 1, i + 1)
      }
    }
    if i < text.count, text[i] == UInt8(ascii: "e") || text[i] == UInt8(ascii: "E") {
      i += 1
      let below = i < text.count && text[i] == UInt8(ascii: "-")
      if i < text.count, text[i] == UInt8(ascii: "-") || text[i] == UInt8(ascii: "+") { i += 1 }
      var written = 0
      guard isDigit(i) else { return nil }
      while isDigit(i), written < 1_000 {
        written = written * 10 + Int(text[i] - UInt8(ascii: "0"))
        i += 1
      }
      exponent += below ? -written : written
    }
    guard i == text.count, count > 0, count <= 15, abs(exponent) <= 22 else { return nil }
    let value =
      exponent < 0 ? Double(digits) / exactPowers[-exponent] : Double(digits) * exactPowers[exponent]
    return negative ? -value : value
  }

  /// `count` values of `type` written PLAIN; a fixed-length array is `typeLength` bytes.
  mutating func plain(_ count: Int, type: ParquetPhysicalType, typeLength: Int) throws(DataSourceError)
    -> PhysicalValues
  {
    switch type {
    case .boolean:
      var bits: [UInt64] = []
      try unpack(count, width: 1, into: &bits)
      return .bools(bits.map { UInt8($0) })
    case .int32:
      let raw = try take(count * 4)
      return .ints(
        (0..<count).map {
          Int64(Int32(bitPattern: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self)))
        })
    case .int64:
      let raw = try take(count * 8)
      return .ints(
        (0..<count).map { Int64(bitPattern: raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)) })
    case .int96:
      let raw = try take(count * 12)
      return .ints(
        (0..<count).map { i in
          let nanos = Int64(bitPattern: raw.loadUnaligned(fromByteOffset: i * 12, as: UInt64.self))
          let julianDay = Int64(raw.loadUnaligned(fromByteOffset: i * 12 + 8, as: UInt32.self))
          // Microseconds since 1970: the Julian day of 1970-01-01 is 2,440,588.
          return (julianDay - 2_440_588) &* 86_400_000_000 &+ nanos / 1_000
        })
    case .float:
      let raw = try take(count * 4)
      return .doubles(
        (0..<count).map {
          Self.double(Float(bitPattern: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self)))
        })
    case .double:
      let raw = try take(count * 8)
      return .doubles(
        (0..<count).map { Double(bitPattern: raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)) })
    case .byteArray:
      var bytes: [UInt8] = []
      var ends: [Int] = []
      // Four bytes of length at least a value: no more than the page's bytes can hold.
      ends.reserveCapacity(min(count, remaining / 4))
      for _ in 0..<count {
        let length = Int(try littleEndian(4))
        bytes.append(contentsOf: try take(length))
        ends.append(bytes.count)
      }
      return .byteArrays(bytes: bytes, ends: ends)
    case .fixedLengthByteArray:
      guard typeLength > 0 else { throw damaged() }
      let raw = try take(count * typeLength)
      return .byteArrays(bytes: Array(raw), ends: (1...max(count, 1)).prefix(count).map { $0 * typeLength })
    }
  }

  /// `count` values of `type` written by `encoding` (not a dictionary's indices).
  mutating func values(_ count: Int, encoding: ParquetEncoding, type: ParquetPhysicalType, typeLength: Int)
    throws(DataSourceError) -> PhysicalValues?
  {
    switch encoding {
    case .plain:
      return try plain(count, type: type, typeLength: typeLength)
    case .rle:
      guard type == .boolean else { return nil }
      _ = try littleEndian(4)
      return .bools(try hybrid(count, width: 1).map { UInt8(truncatingIfNeeded: $0) })
    case .deltaBinaryPacked:
      switch type {
      case .int32: return .ints(try deltaBinaryPacked(count).map { Int64(Int32(truncatingIfNeeded: $0)) })
      case .int64: return .ints(try deltaBinaryPacked(count))
      default: return nil
      }
    case .deltaLengthByteArray:
      guard type == .byteArray else { return nil }
      let lengths = try deltaBinaryPacked(count)
      var bytes: [UInt8] = []
      var ends: [Int] = []
      for length in lengths {
        guard length >= 0 else { throw damaged() }
        bytes.append(contentsOf: try take(Int(length)))
        ends.append(bytes.count)
      }
      return .byteArrays(bytes: bytes, ends: ends)
    case .deltaByteArray:
      guard type == .byteArray || type == .fixedLengthByteArray else { return nil }
      let prefixes = try deltaBinaryPacked(count)
      let suffixes = try deltaBinaryPacked(count)
      var bytes: [UInt8] = []
      var ends: [Int] = []
      var previous = 0..<0
      for (prefix, suffix) in zip(prefixes, suffixes) {
        guard prefix >= 0, suffix >= 0, Int(prefix) <= previous.count,
          bytes.count <= Int(UInt32.max) - Int(prefix),
          type != .fixedLengthByteArray || Int(prefix + suffix) == typeLength
        else { throw damaged() }
        let start = bytes.count
        let shared = Array(bytes[previous.lowerBound..<previous.lowerBound + Int(prefix)])
        bytes.append(contentsOf: shared)
        bytes.append(contentsOf: try take(Int(suffix)))
        ends.append(bytes.count)
        previous = start..<bytes.count
      }
      return .byteArrays(bytes: bytes, ends: ends)
    case .byteStreamSplit:
      let width: Int
      switch type {
      case .float, .int32: width = 4
      case .double, .int64: width = 8
      case .fixedLengthByteArray: width = typeLength
      default: return nil
      }
      guard width > 0 else { throw damaged() }
      let streams = try take(count * width)
      // Byte `k` of value `i` is in stream `k`, at `i`: put back together, then read PLAIN.
      var joined = [UInt8](repeating: 0, count: count * width)
      for i in 0..<count {
        for k in 0..<width { joined[i * width + k] = streams[k * count + i] }
      }
      return try withBytes(of: joined) { raw throws(DataSourceError) in
        var page = PageBytes(raw, damaged: damaged)
        return try page.plain(count, type: type, typeLength: typeLength)
      }
    case .plainDictionary, .rleDictionary, .bitPacked:
      return nil
    }
  }
}

/// `body` over an array's first `count` bytes (all when `nil`), its error kept typed
/// (`withUnsafeBytes` rethrows any error).
func withBytes<R>(
  of array: [UInt8], count: Int? = nil, _ body: (UnsafeRawBufferPointer) throws(DataSourceError) -> R
) throws(DataSourceError) -> R {
  try array.withUnsafeBytes { raw in
    let bytes = UnsafeRawBufferPointer(rebasing: raw[0..<min(count ?? raw.count, raw.count)])
    return Result { () throws(DataSourceError) -> R in try body(bytes) }
  }.get()
}
