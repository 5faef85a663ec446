import DataSourceKit
import DataSourceKitValues
import Foundation

/// The files a zip archive holds, from its central directory.
struct ZipDirectory {
  struct Entry {
    var name: String
    var method: UInt16
    var compressedSize: Int
    var size: Int
    var localHeaderOffset: Int
    /// The general purpose flags: bit 0 marks an encrypted member.
    var flags: UInt16 = 0
    /// The CRC-32 of the member's bytes, as the archive's directory gives it.
    var crc: UInt32 = 0

    /// Where the member's data starts: after its local header, whose name and extra field may
    /// differ in length from the central directory's.
    func dataOffset(in file: OpenFile, displayPath: String) throws -> Int {
      var header = [UInt8](repeating: 0, count: 30)
      guard pread(file.descriptor, &header, 30, off_t(localHeaderOffset)) == 30,
        ZipDirectory.uint32(header, 0) == 0x0403_4B50
      else {
        throw DataSourceError.unreadable(
          path: displayPath, reason: "its member \"\(name)\" has no local header")
      }
      return localHeaderOffset + 30 + Int(ZipDirectory.uint16(header, 26))
        + Int(ZipDirectory.uint16(header, 28))
    }
  }

  let entries: [Entry]
  let displayPath: String

  init(_ file: OpenFile, displayPath: String) throws {
    self.displayPath = displayPath
    func damaged(_ why: String) -> DataSourceError {
      DataSourceError.unreadable(path: displayPath, reason: "it is not a zip archive dsh can read: \(why)")
    }
    // The end of central directory record: in the last 64 KiB + 22 bytes (its comment may be long).
    let tailLength = min(file.size, 65_557)
    var tail = [UInt8](repeating: 0, count: tailLength)
    guard pread(file.descriptor, &tail, tailLength, off_t(file.size - tailLength)) == tailLength else {
      throw damaged("it could not be read")
    }
    var end = -1
    var index = tailLength - 22
    while index >= 0 {
      // The record ends the file with its comment: a signature inside a comment is not it.
      if Self.uint32(tail, index) == 0x0605_4B50,
        index + 22 + Int(Self.uint16(tail, index + 20)) == tailLength
      {
        end = index
        break
      }
      index -= 1
    }
    guard end >= 0 else { throw damaged("no central directory") }
    let count = Int(Self.uint16(tail, end + 10))
    let directorySize = Int(Self.uint32(tail, end + 12))
    let directoryOffset = Int(Self.uint32(tail, end + 16))
    if directoryOffset == 0xFFFF_FFFF || count == 0xFFFF {
      throw damaged("it is a ZIP64 archive (over 4 GiB or 65,535 files), larger than dsh reads")
    }
    guard directoryOffset + directorySize <= file.size else {
      throw damaged("its directory runs past its end")
    }
    var directory = [UInt8](repeating: 0, count: directorySize)
    guard pread(file.descriptor, &directory, directorySize, off_t(directoryOffset)) == directorySize else {
      throw damaged("its directory could not be read")
    }
    var entries: [Entry] = []
    var at = 0
    for _ in 0..<count {
      guard at + 46 <= directory.count, Self.uint32(directory, at) == 0x0201_4B50 else {
        throw damaged("its directory is cut short")
      }
      let nameLength = Int(Self.uint16(directory, at + 28))
      let extraLength = Int(Self.uint16(directory, at + 30))
      let commentLength = Int(Self.uint16(directory, at + 32))
      guard at + 46 + nameLength <= directory.count else { throw damaged("its directory is cut short") }
      let name = String(decoding: directory[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self)
      entries.append(
        Entry(
          name: name, method: Self.uint16(directory, at + 10),
          compressedSize: Int(Self.uint32(directory, at + 20)),
          size: Int(Self.uint32(directory, at + 24)), localHeaderOffset: Int(Self.uint32(directory, at + 42)),
          flags: Self.uint16(directory, at + 8), crc: Self.uint32(directory, at + 16))
      )
      at += 46 + nameLength + extraLength + commentLength
    }
    self.entries = entries
  }

  /// The files, without folders and the metadata macOS adds (`__MACOSX/`, `.DS_Store`).
  var files: [Entry] {
    entries.filter { entry in
      !entry.name.hasSuffix("/") && !entry.name.hasPrefix("__MACOSX/")
        && (entry.name as NSString).lastPathComponent != ".DS_Store"
    }
  }

  /// The member `name` (its path in the archive, or its file name when that is unique), or the
  /// archive's one file.
  func entry(named name: String?) throws -> Entry {
    let files = self.files
    let listed =
      files.prefix(8).map { "\"\($0.name)\"" }.joined(separator: ", ") + (files.count > 8 ? ", …" : "")
    guard let name else {
      guard files.count == 1, let only = files.first else {
        throw DataSourceError.unreadable(
          path: displayPath,
          reason: files.isEmpty
            ? "the archive holds no file"
            : "the archive holds \(files.count) files (\(listed)): name one, as in member \(files[0].name.debugDescription)"
        )
      }
      return only
    }
    if let exact = files.first(where: { $0.name == name }) { return exact }
    let byFileName = files.filter { ($0.name as NSString).lastPathComponent == name }
    if byFileName.count == 1 { return byFileName[0] }
    throw DataSourceError.unreadable(
      path: displayPath, reason: "the archive has no member \"\(name)\"; it holds \(listed)")
  }

  static func uint16(_ bytes: [UInt8], _ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }

  static func uint32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
  }
}
