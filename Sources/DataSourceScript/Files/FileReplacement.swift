import Foundation

/// Replaces a file's contents all at once: written beside it, flushed to disk, then renamed
/// over it, so a full disk or a crash leaves the old file whole.
///
/// What is at the path is respected: a symbolic link is followed and its target written; an
/// existing file keeps its permissions and, where allowed, its owner; a device, a FIFO, a socket
/// or a folder is refused (renaming over `/dev/full` would replace the device).
///
/// dsh follows the final link itself (renaming over a link would replace the link), so it makes
/// the kernel's own check (`fs.protected_symlinks`): a link in a sticky folder anybody may write
/// (`/tmp`) is followed only when it is the follower's or the folder owner's, or another user
/// could plant one that makes root write a file only root may. The temporary file is made and
/// renamed inside the target's folder by descriptor (`openat`, `renameat`), so the folder
/// checked is the folder written.
///
///     let replacement = try FileReplacement(path: "session.dsh")
///     try replacement.write(Data(script.utf8))
public struct FileReplacement: Sendable {
  /// Why a file cannot be written, in words for a message.
  public struct Failure: Error, Equatable, Sendable {
    public var reason: String
    public init(reason: String) { self.reason = reason }
  }

  /// The file written: the path given, or the target of the link at it.
  public let target: String
  /// The temporary file beside the target.
  public let temporary: String
  private let existing: stat?

  /// Checks what is at `path` and picks the temporary file; writes nothing.
  public init(path: String) throws(Failure) {
    if path.hasSuffix("/") {
      throw Failure(reason: "a path ending in '/' is a folder; name a file in it, as '\(path)name'")
    }
    // The folders on the way are links the kernel follows as it opens them: each checked as the
    // final one is (the kernel's own check may be off: fs.protected_symlinks = 0).
    try Self.checkFoldersOnTheWay(to: path)
    var target = path
    // Follow symbolic links (up to a limit, as the kernel does) to the file they name.
    var hops = 0
    var status = stat()
    while lstat(target, &status) == 0, status.st_mode & S_IFMT == S_IFLNK {
      try Self.checkFollowable(link: target, status: status, first: hops == 0)
      hops += 1
      guard hops <= 40, let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: target)
      else {
        throw Failure(reason: "too many levels of symbolic links")
      }
      target =
        destination.hasPrefix("/")
        ? destination
        : ((target as NSString).deletingLastPathComponent as NSString).appendingPathComponent(destination)
    }
    if lstat(target, &status) == 0 {
      switch status.st_mode & S_IFMT {
      case S_IFREG:
        // Renaming over a file needs only the folder's permission: a file its owner made
        // read-only would be replaced where a shell's redirect, cp or sqlite3 refuse.
        // A file another user made in a shared sticky folder (as fs.protected_regular refuses):
        // the new file would keep its owner and mode, handing them what dsh writes.
        if status.st_uid != geteuid(), let folder = Self.sharedStickyFolder(of: target),
          status.st_uid != folder.st_uid
        {
          let owner =
            getpwuid(status.st_uid).map { String(cString: $0.pointee.pw_name) } ?? "uid \(status.st_uid)"
          throw Failure(
            reason:
              "it is a file that another user (\(owner)) made in a shared folder; dsh does not write over it (it would stay theirs): remove it or write another file"
          )
        }
        guard access(target, W_OK) == 0 else {
          let mode = String(status.st_mode & 0o777, radix: 8)
          throw Failure(
            reason: "it is read-only (mode \(mode)); make it writable first (chmod u+w) or write another file"
          )
        }
        existing = status
      case S_IFDIR: throw Failure(reason: "it is a folder; name a file in it, as '\(path)/name'")
      default: throw Failure(reason: "it is not a regular file (a device, a pipe or a socket)")
      }
    } else if errno == ENOENT || errno == ENOTDIR {
      existing = nil
      let folder = (target as NSString).deletingLastPathComponent
      var isFolder: ObjCBool = false
      if !folder.isEmpty,
        !FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) || !isFolder.boolValue
      {
        throw Failure(reason: "no such folder '\(folder)'")
      }
    } else {
      throw Failure(reason: String(cString: strerror(errno)))
    }
    self.target = target
    // The process's number (for a later dsh to find it left behind) and a random part: a name
    // another user could make first in a shared folder would otherwise stop every write there.
    temporary = target + ".tmp-\(getpid())-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    Self.removeStaleTemporaries(of: target)
  }

  /// The status of the folder of `path` when it is sticky and anybody may write it (`/tmp`).
  private static func sharedStickyFolder(of path: String) -> stat? {
    let folder = (path as NSString).deletingLastPathComponent
    var status = stat()
    guard stat(folder.isEmpty ? "." : folder, &status) == 0, status.st_mode & 0o1000 != 0,
      status.st_mode & 0o002 != 0
    else { return nil }
    return status
  }

  /// Walks `path` a component at a time, as the kernel resolves it, and checks every link met
  /// on the way to its last component (which the caller resolves itself).
  private static func checkFoldersOnTheWay(to path: String) throws(Failure) {
    var resolved = path.hasPrefix("/") ? "" : FileManager.default.currentDirectoryPath
    var pending = path.split(separator: "/").map(String.init)
    guard !pending.isEmpty else { return }
    pending.removeLast()
    var hops = 0
    while !pending.isEmpty {
      let component = pending.removeFirst()
      if component == "." || component.isEmpty { continue }
      if component == ".." {
        resolved = (resolved as NSString).deletingLastPathComponent
        if resolved == "/" { resolved = "" }
        continue
      }
      let next = resolved + "/" + component
      var status = stat()
      guard lstat(next, &status) == 0 else { return }
      guard status.st_mode & S_IFMT == S_IFLNK else {
        resolved = next
        continue
      }
      try checkFollowable(link: next, status: status, first: false)
      hops += 1
      guard hops <= 40, let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: next)
      else {
        throw Failure(reason: "too many levels of symbolic links")
      }
      if destination.hasPrefix("/") { resolved = "" }
      pending = destination.split(separator: "/").map(String.init) + pending
    }
  }

  /// Refuses a link the kernel would not follow for this user: one in a sticky folder that
  /// anybody may write, owned by neither this user nor the folder's owner (Linux's
  /// `may_follow_link` under `fs.protected_symlinks`).
  private static func checkFollowable(link: String, status: stat, first: Bool) throws(Failure) {
    let folder = (link as NSString).deletingLastPathComponent
    var folderStatus = stat()
    guard stat(folder.isEmpty ? "." : folder, &folderStatus) == 0 else { return }
    let sticky = folderStatus.st_mode & 0o1000 != 0
    let writableByAnybody = folderStatus.st_mode & 0o002 != 0
    guard sticky, writableByAnybody, status.st_uid != geteuid(), status.st_uid != folderStatus.st_uid else {
      return
    }
    let owner = getpwuid(status.st_uid).map { String(cString: $0.pointee.pw_name) } ?? "uid \(status.st_uid)"
    let what = first ? "it is" : "it leads to '\(link)', which is"
    throw Failure(
      reason:
        "\(what) a symbolic link that another user (\(owner)) made in a shared folder; dsh does not write through it, as the kernel would not follow it (fs.protected_symlinks): remove the link or write another file"
    )
  }

  /// Removes the temporary files a dsh of this user killed while writing `target` left beside it
  /// (named `TARGET.tmp-PID-…`, for a process that no longer runs); another dsh's, still
  /// writing, and other users' files stay.
  private static func removeStaleTemporaries(of target: String) {
    let folder = (target as NSString).deletingLastPathComponent
    let prefix = (target as NSString).lastPathComponent + ".tmp-"
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder)
    else { return }
    for name in names where name.hasPrefix(prefix) {
      let path = folder.isEmpty ? name : (folder as NSString).appendingPathComponent(name)
      var status = stat()
      guard let pid = pid_t(name.dropFirst(prefix.count).prefix { $0 != "-" }), pid > 0, pid != getpid(),
        kill(pid, 0) != 0, errno == ESRCH, lstat(path, &status) == 0, status.st_uid == geteuid()
      else { continue }
      unlink(path)
    }
  }

  /// Writes `data` as the file's new contents.
  public func write(_ data: Data) throws(Failure) {
    try replace { fd throws(Failure) in
      let failure: Int32? = data.withUnsafeBytes { buffer in
        guard let base = buffer.baseAddress else { return nil }
        var offset = 0
        while offset < buffer.count {
          let n = Foundation.write(fd, base + offset, buffer.count - offset)
          if n < 0 {
            if errno == EINTR { continue }
            return errno
          }
          offset += n
        }
        return nil
      }
      if let failure { throw Failure(reason: String(cString: strerror(failure))) }
    }
  }

  /// Makes the temporary file, lets `fill` write it through its descriptor, then flushes it and
  /// renames it over the target; on any failure the temporary file is removed and the target is
  /// as it was.
  public func replace(_ fill: (Int32) throws(Failure) -> Void) throws(Failure) {
    let mode = existing.map { $0.st_mode & 0o7777 } ?? 0o666
    let folderPath = (target as NSString).deletingLastPathComponent
    let folder = open(folderPath.isEmpty ? "." : folderPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard folder >= 0 else { throw Failure(reason: String(cString: strerror(errno))) }
    defer { close(folder) }
    let name = (target as NSString).lastPathComponent
    let temporaryName = (temporary as NSString).lastPathComponent
    // O_NOFOLLOW and O_EXCL: a name another user made in the meantime is never written through.
    let fd = openat(folder, temporaryName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
    guard fd >= 0 else { throw Failure(reason: String(cString: strerror(errno))) }
    var closed = false
    do throws(Failure) {
      try fill(fd)
      if let existing {
        // The new file takes the old one's permissions (open applied the umask) and owner.
        fchmod(fd, existing.st_mode & 0o7777)
        if fchown(fd, existing.st_uid, existing.st_gid) != 0 {
          fchown(fd, getuid(), existing.st_gid)
          fchmod(fd, existing.st_mode & 0o7777)
        }
      }
      guard fsync(fd) == 0 else { throw Failure(reason: String(cString: strerror(errno))) }
      closed = true
      guard close(fd) == 0 else { throw Failure(reason: String(cString: strerror(errno))) }
    } catch {
      if !closed { close(fd) }
      unlinkat(folder, temporaryName, 0)
      throw error
    }
    // Renaming replaces the name itself: a link put there since is replaced, never followed.
    guard renameat(folder, temporaryName, folder, name) == 0 else {
      let reason = String(cString: strerror(errno))
      unlinkat(folder, temporaryName, 0)
      throw Failure(reason: reason)
    }
  }
}
