import CZlib
import Foundation

/// A PNG picture decoded to 8-bit RGBA pixels: enough of the format for what Chromium writes
/// (8-bit RGB or RGBA, not interlaced), so the tests can look at the pictures it draws.
struct PNGImage: Equatable {
  let width: Int
  let height: Int
  /// Row after row, four bytes a pixel.
  let pixels: [UInt8]

  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  init(width: Int, height: Int, pixels: [UInt8]) {
    self.width = width
    self.height = height
    self.pixels = pixels
  }

  init(contentsOf path: String) throws {
    try self.init(data: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
  }

  init(data: [UInt8]) throws {
    guard data.count > 8, data[0..<8].elementsEqual([137, 80, 78, 71, 13, 10, 26, 10]) else {
      throw Failure(description: "not a PNG file")
    }
    var position = 8
    var header: [UInt8] = []
    var compressed: [UInt8] = []
    func bigEndian(_ at: Int) -> Int {
      data[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
    }
    while position + 8 <= data.count {
      let length = bigEndian(position)
      let type = String(decoding: data[position + 4..<position + 8], as: UTF8.self)
      let body = Array(data[position + 8..<min(position + 8 + length, data.count)])
      if type == "IHDR" { header = body }
      if type == "IDAT" { compressed += body }
      if type == "IEND" { break }
      position += 12 + length
    }
    guard header.count == 13 else { throw Failure(description: "no IHDR chunk") }
    let width = header[0..<4].reduce(0) { $0 << 8 | Int($1) }
    let height = header[4..<8].reduce(0) { $0 << 8 | Int($1) }
    let (depth, colorType, interlace) = (header[8], header[9], header[12])
    guard depth == 8, colorType == 2 || colorType == 6, interlace == 0 else {
      throw Failure(
        description: "unsupported PNG: depth \(depth), colour type \(colorType), interlace \(interlace)")
    }
    let channels = colorType == 6 ? 4 : 3
    let stride = width * channels
    var raw = [UInt8](repeating: 0, count: (stride + 1) * height)
    var rawLength = uLongf(raw.count)
    let status = compressed.withUnsafeBufferPointer { source in
      raw.withUnsafeMutableBufferPointer { target in
        uncompress(target.baseAddress, &rawLength, source.baseAddress, uLong(source.count))
      }
    }
    guard status == Z_OK, Int(rawLength) == raw.count else {
      throw Failure(description: "the image data does not inflate (zlib status \(status))")
    }
    // Undo each row's filter (PNG specification, section 9).
    var rows = [UInt8](repeating: 0, count: stride * height)
    for y in 0..<height {
      let filter = raw[y * (stride + 1)]
      for x in 0..<stride {
        let value = raw[y * (stride + 1) + 1 + x]
        let a = x >= channels ? Int(rows[y * stride + x - channels]) : 0
        let b = y > 0 ? Int(rows[(y - 1) * stride + x]) : 0
        let c = x >= channels && y > 0 ? Int(rows[(y - 1) * stride + x - channels]) : 0
        let predicted: Int
        switch filter {
        case 0: predicted = 0
        case 1: predicted = a
        case 2: predicted = b
        case 3: predicted = (a + b) / 2
        case 4:
          let p = a + b - c
          let (pa, pb, pc) = (abs(p - a), abs(p - b), abs(p - c))
          predicted = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
        default: throw Failure(description: "unknown row filter \(filter)")
        }
        rows[y * stride + x] = UInt8(truncatingIfNeeded: Int(value) + predicted)
      }
    }
    var pixels = [UInt8](repeating: 255, count: width * height * 4)
    for i in 0..<width * height {
      for channel in 0..<channels { pixels[i * 4 + channel] = rows[i * channels + channel] }
    }
    self.init(width: width, height: height, pixels: pixels)
  }

  /// The colour at a point, as red, green and blue.
  func rgb(x: Int, y: Int) -> (r: Int, g: Int, b: Int) {
    let i = (y * width + x) * 4
    return (Int(pixels[i]), Int(pixels[i + 1]), Int(pixels[i + 2]))
  }

  /// The share of pixels whose colour differs from `other`'s by more than `threshold` in any
  /// channel: 0 for the same picture, 1 for nothing alike (or pictures of different sizes).
  func differingShare(from other: PNGImage, threshold: Int = 48) -> Double {
    guard width == other.width, height == other.height else { return 1 }
    var differing = 0
    for i in 0..<width * height {
      for channel in 0..<3
      where abs(Int(pixels[i * 4 + channel]) - Int(other.pixels[i * 4 + channel])) > threshold {
        differing += 1
        break
      }
    }
    return Double(differing) / Double(max(width * height, 1))
  }
}
