import Foundation
import Testing

/// gzip, zip, bzip2 and zstd data files, made by Python's own gzip, zipfile and bz2 modules,
/// zstd frames written by hand and by zstd itself (as other tools make them), read by the real
/// binary.
@Suite("Compressed data files")
struct CompressedFileTests {
  /// A folder of compressed copies of the sample data, and some damaged ones.
  static func fixtures() throws -> String {
    let folder = NSTemporaryDirectory() + "dsh-compressed-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let data = DSHProcess.packageRoot + "/Scripts/data"
    let script = """
      import gzip, zipfile, shutil, bz2, sys
      folder, data = sys.argv[1], sys.argv[2]
      people = open(data + '/people.csv', 'rb').read()
      teams = open(data + '/teams.json', 'rb').read()
      open(folder + '/people.csv.gz', 'wb').write(gzip.compress(people))
      open(folder + '/teams.json.gz', 'wb').write(gzip.compress(teams))
      # Two gzip members one after the other, as bgzip and `cat a.gz b.gz` make.
      half = people.index(b'\\n5,') + 1
      open(folder + '/two-members.csv.gz', 'wb').write(gzip.compress(people[:half]) + gzip.compress(people[half:]))
      open(folder + '/cut.csv.gz', 'wb').write(gzip.compress(people)[:200])
      open(folder + '/plain.csv.gz', 'wb').write(people)
      open(folder + '/people.csv', 'wb').write(people)
      open(folder + '/people.csv.bz2', 'wb').write(bz2.compress(people))
      open(folder + '/teams.json.bz2', 'wb').write(bz2.compress(teams))
      # Two bzip2 streams, as pbzip2 and `cat a.bz2 b.bz2` make, then bytes that start no third.
      open(folder + '/two-streams.csv.bz2', 'wb').write(bz2.compress(people[:half]) + bz2.compress(people[half:]) + b'\\n\\n')
      open(folder + '/cut.csv.bz2', 'wb').write(bz2.compress(people)[:100])
      # Bytes after the last stream that merely start with its first letter, as bzip2 ignores them.
      open(folder + '/garbage.csv.bz2', 'wb').write(bz2.compress(people[:half]) + bz2.compress(people[half:]) + b'Bogus trailing bytes\\n')
      # A plain file whose first bytes look like bzip2's signature but for the block size.
      open(folder + '/bzhou.csv', 'wb').write(b'BZhou,score\\n1,2\\n')
      open(folder + '/utf16.csv.bz2', 'wb').write(bz2.compress(people.decode('utf-8').encode('utf-16')))
      damaged = bytearray(bz2.compress(people)); damaged[60] ^= 0xFF
      open(folder + '/damaged.csv.bz2', 'wb').write(bytes(damaged))
      open(folder + '/bomb.csv.bz2', 'wb').write(bz2.compress(b'a,b\\n' + b'1,2\\n' * (1 << 19)))
      # zstd frames written by hand (raw blocks, as the format defines them): two frames with a
      # skippable frame between, as `cat a.zst b.zst` and zstd's own tools make.
      def raw_frame(data):
          out = bytes([0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x50])
          blocks = [data[i:i + 100000] for i in range(0, len(data), 100000)] or [b'']
          for k, block in enumerate(blocks):
              header = (len(block) << 3) | (1 if k == len(blocks) - 1 else 0)
              out += header.to_bytes(3, 'little') + block
          return out
      skippable = bytes([0x50, 0x2A, 0x4D, 0x18]) + (5).to_bytes(4, 'little') + b'hello'
      open(folder + '/raw-frames.csv.zst', 'wb').write(raw_frame(people[:half]) + skippable + raw_frame(people[half:]))
      # A skippable frame first (metadata before the data), and one alone: zstd all the same.
      open(folder + '/skippable-first.csv.zst', 'wb').write(skippable + raw_frame(people))
      open(folder + '/skippable-only.csv.zst', 'wb').write(skippable)
      open(folder + '/cut.csv.zst', 'wb').write(raw_frame(people)[:120])
      damaged = bytearray(raw_frame(people)); damaged[4] = 0xFF
      open(folder + '/damaged.csv.zst', 'wb').write(bytes(damaged))
      open(folder + '/teams.json.zst', 'wb').write(raw_frame(teams))
      with zipfile.ZipFile(folder + '/one.zip', 'w', zipfile.ZIP_DEFLATED) as z:
          z.writestr('__MACOSX/._people.csv', b'junk')
          z.writestr('export/people.csv', people)
      with zipfile.ZipFile(folder + '/stored.zip', 'w', zipfile.ZIP_STORED) as z:
          z.writestr('people.csv', people)
      # A stored member with one byte of its data changed: only its CRC-32 tells.
      stored = bytearray(open(folder + '/stored.zip', 'rb').read())
      at = stored.index(b'Ada Lovelace'); stored[at] = ord('B')
      open(folder + '/changed.zip', 'wb').write(bytes(stored))
      # A member marked encrypted (general purpose bit 0, in its local and central headers), as
      # zip -P writes one: its bytes are ciphertext.
      locked = bytearray(open(folder + '/one.zip', 'rb').read())
      for signature, flags in ((b'PK\\x03\\x04', 6), (b'PK\\x01\\x02', 8)):
          at = locked.find(signature)
          while at >= 0:
              locked[at + flags] |= 1
              at = locked.find(signature, at + 4)
      open(folder + '/encrypted.zip', 'wb').write(bytes(locked))
      with zipfile.ZipFile(folder + '/two.zip', 'w', zipfile.ZIP_DEFLATED) as z:
          z.writestr('people.csv', people)
          z.writestr('teams.json', teams)
      # 64 MB of rows in 64 KB: more than a maxsize of 1 MB lets through.
      with gzip.open(folder + '/bomb.csv.gz', 'wb') as f:
          f.write(b'a,b\\n')
          row = b'1,2\\n' * (1 << 18)
          for _ in range(64):
              f.write(row)
      """
    let made = try DSHProcess.runCommand(
      ["/usr/bin/env", "python3", "-c", script, folder, data], directory: folder)
    #expect(made.status == 0, "\(made.output)")
    // Compressed blocks, and a bomb, from zstd itself (Scripts/test.sh installs it).
    let zstd = try DSHProcess.runCommand(
      [
        "/bin/sh", "-c",
        "zstd -q -19 -c people.csv > people.csv.zst && (echo a,b; yes 1,2 | head -n 16000000) | zstd -q -c > bomb.csv.zst",
      ], directory: folder)
    #expect(zstd.status == 0, "\(zstd.output)")
    return folder
  }

  @Test(
    "gzip, zip, bzip2 and zstd files read as the files they hold: members, several gzip members, bzip2 streams and zstd frames"
  )
  func readsWhatTheyHold() throws {
    let folder = try Self.fixtures()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let plain = try DSHProcess.run(["-c", "show csv \"Scripts/data/people.csv\" as csv"]).output
    for file in [
      "people.csv.gz", "two-members.csv.gz", "one.zip", "stored.zip", "plain.csv.gz", "people.csv.bz2",
      "two-streams.csv.bz2", "garbage.csv.bz2", "people.csv.zst", "raw-frames.csv.zst",
    ] {
      let read = try DSHProcess.run(["-c", "show csv \"\(folder)/\(file)\" as csv"])
      #expect(read.status == 0, "\(file): \(read.output)")
      #expect(read.output == plain, "\(file)")
    }
    let result = try DSHProcess.run([
      "-c", "show json \"\(folder)/teams.json.gz\" at \"teams\" | select name as csv",
      "-c", "show csv \"\(folder)/two.zip\" member \"people.csv\" | where id == 1 | select name as csv",
      "-c",
      "show json \"\(folder)/two.zip\" member \"teams.json\" at \"teams\" | limit 1 | select name as csv",
      "-c", "show csv \"\(folder)/one.zip\" member \"people.csv\" | limit 1 | select name as csv",
      "-c", "describe csv \"\(folder)/people.csv.gz\"",
      "-c", "show json \"\(folder)/teams.json.bz2\" at \"teams\" | select name as csv",
      "-c", "show json \"\(folder)/teams.json.zst\" at \"teams\" | select name as csv",
    ])
    #expect(result.status == 0, "\(result.output)")
    #expect(result.output.contains("name\nResearch\nEngineering\nDesign\nSupport 🛟\n"), "\(result.output)")
    #expect(
      result.output.hasSuffix(
        "name\nResearch\nEngineering\nDesign\nSupport 🛟\nname\nResearch\nEngineering\nDesign\nSupport 🛟\n"),
      "\(result.output.suffix(200))")
    #expect(
      result.output.contains("name\nAda Lovelace\nname\nResearch\nname\nAda Lovelace\n"), "\(result.output)")
    #expect(result.output.contains("(1 section, 10 items, loaded)"), "\(result.output)")
  }

  @Test(
    "an archive of several files, a missing member, files cut short or damaged, and bombs each say what is wrong"
  )
  func refusals() throws {
    let folder = try Self.fixtures()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let result = try DSHProcess.run([
      "-c", "show csv \"\(folder)/two.zip\"",
      "-c", "show csv \"\(folder)/two.zip\" member \"nope.csv\"",
      "-c", "show csv \"\(folder)/changed.zip\"",
      "-c", "show csv \"\(folder)/encrypted.zip\" member \"people.csv\"",
      "-c", "show csv \"\(folder)/skippable-first.csv.zst\" | limit 1 as csv",
      "-c", "show csv \"\(folder)/skippable-only.csv.zst\"",
      "-c", "show csv \"\(folder)/cut.csv.gz\"",
      "-c", "show csv \"\(folder)/bomb.csv.gz\" maxsize 1",
      "-c", "show csv \"\(folder)/bzhou.csv\" as csv",
      "-c", "show csv \"\(folder)/utf16.csv.bz2\"",
      "-c", "show csv \"\(folder)/cut.csv.zst\"",
      "-c", "show csv \"\(folder)/damaged.csv.zst\"",
      "-c", "show csv \"\(folder)/bomb.csv.zst\" maxsize 1",
      "-c", "show csv \"\(folder)/people.csv.zst\" member \"people.csv\"",
      "-c", "show csv \"\(folder)/cut.csv.bz2\"",
      "-c", "show csv \"\(folder)/damaged.csv.bz2\"",
      "-c", "show csv \"\(folder)/bomb.csv.bz2\" maxsize 1",
      "-c", "show csv \"\(folder)/people.csv.bz2\" member \"people.csv\"",
      "-c", "show csv \"Scripts/data/people.csv\" member \"x\"",
      "-c", "show csv \"\(folder)/bomb.csv.zst\" | limit 1 as csv",
      "-c", "let kept = csv \"\(folder)/people.csv.gz\"",
      "-c", "show csv \"\(folder)/bomb.csv.gz\" | limit 1 as csv",
    ])
    #expect(
      result.output.contains(
        "the archive holds 2 files (\"people.csv\", \"teams.json\"): name one, as in member \"people.csv\""),
      "\(result.output)")
    #expect(
      result.output.contains(
        "the archive has no member \"nope.csv\"; it holds \"people.csv\", \"teams.json\""))
    // Each kind's file cut short, damaged, too large, or asked for a member.
    for kind in ["gz", "bz2", "zst"] {
      #expect(
        result.output.contains("cut.csv.\(kind)': it ends before its compressed data does"),
        "\(result.output)")
      #expect(
        result.output.contains("bomb.csv.\(kind)': it inflates to more than 1 MB, the limit maxsize set"),
        "\(result.output)")
    }
    for expected in [
      "damaged.csv.zst': its compressed data is damaged (",
      "damaged.csv.bz2': its compressed data is damaged (a block or its checksum does not match) after",
      "a zstd file holds one file, not members: leave out member \"people.csv\"",
      "a bzip2 file holds one file, not members: leave out member \"people.csv\"",
      "BZhou,score\n1,2\n",
      "convert it with: bzip2 -dc '\(folder)/utf16.csv.bz2' | iconv -f UTF-16",
      "it is not a zip archive, so it has no member \"x\"",
      "changed.zip': its member \"people.csv\" fails its CRC-32 check: the archive is damaged",
      "encrypted.zip': its member \"export/people.csv\" is encrypted (a zip with a password)",
      "id,name,email,team,age,active,joined\n1,Ada Lovelace,ada@example.com",
      "skippable-only.csv.zst",
    ] {
      #expect(result.output.contains(expected), "\(expected) in \(result.output)")
    }
    // Within the limit the same file reads (64 MB of rows).
    #expect(result.output.hasSuffix("a,b\n1,2\n"), "\(result.output.suffix(300))")
    #expect(result.output.components(separatedBy: "a,b\n1,2\n").count == 3, "\(result.output.suffix(300))")
  }

  @Test("dsh FILE.csv.gz, FILE.csv.bz2 and FILE.csv.zst open the file they hold under its name")
  func openedByName() throws {
    let folder = try Self.fixtures()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let result = try DSHProcess.run([
      "\(folder)/people.csv.gz", "-c", "show people | limit 1 | select name as csv",
    ])
    #expect(result.output == "name\nAda Lovelace\n", "\(result.output)")
    let bzip2 = try DSHProcess.run([
      "\(folder)/people.csv.bz2", "-c", "show people | limit 1 | select name as csv",
    ])
    #expect(bzip2.output == "name\nAda Lovelace\n", "\(bzip2.output)")
    let zstd = try DSHProcess.run([
      "\(folder)/people.csv.zst", "-c", "show people | limit 1 | select name as csv",
    ])
    #expect(zstd.output == "name\nAda Lovelace\n", "\(zstd.output)")
  }
}
