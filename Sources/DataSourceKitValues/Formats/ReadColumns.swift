import DataSourceKit

/// Names for a file's columns that the file may repeat.
package enum ColumnNames {
  /// `written` with each repeat named apart with DuckDB's suffixes (the second `qty` is `qty_1`,
  /// or the first of `qty_2`, `qty_3`, … that names no other column), and the name each made
  /// name stands for.
  ///
  /// Every name written is taken before any is made: a made name never takes the place of a
  /// column further along.
  package static func unique(_ written: [String]) -> (names: [String], renamed: [String: String]) {
    var taken = Set(written)
    var seen: Set<String> = []
    var renamed: [String: String] = [:]
    var names: [String] = []
    names.reserveCapacity(written.count)
    for name in written {
      guard seen.insert(name).inserted else {
        var suffix = 1
        while taken.contains("\(name)_\(suffix)") { suffix += 1 }
        let made = "\(name)_\(suffix)"
        taken.insert(made)
        renamed[made] = name
        names.append(made)
        continue
      }
      names.append(name)
    }
    return (names, renamed)
  }
}

/// A column a reader of a columnar format made whole (a Parquet file's), in the form dsh's
/// columns hold it: typed arrays with their nulls, texts one after another.
package enum ReadColumn {
  case ints([Int], nulls: [Bool]?)
  case doubles([Double], nulls: [Bool]?)
  /// 0 false, 1 true, 2 null.
  case bools([UInt8])
  /// Days since 1970-01-01.
  case dates([Int], nulls: [Bool]?)
  /// Microseconds since 1970-01-01 00:00 UTC.
  case timestamps([Int], nulls: [Bool]?)
  case texts(TextColumnMaker)
}

/// A text column made a value at a time, its texts one after another in its own bytes, coded
/// into a dictionary while they repeat (as a CSV file's text columns are).
package struct TextColumnMaker {
  private var builder: TextColumnBuilder

  /// A maker of about `expectedRows` texts.
  package init(expectedRows: Int) { builder = TextColumnBuilder(expectedRows: expectedRows) }

  /// A text's UTF-8 bytes (valid UTF-8: the caller checks).
  package mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
    // An empty text is length 0 with the flag; length 0 without it is null.
    builder.append(
      bytes, rawLength: bytes.isEmpty ? FieldRefs.escapedFlag : UInt32(bytes.count), isNull: false)
  }

  /// A text.
  package mutating func append(_ text: String) {
    var text = text
    text.withUTF8 { append($0) }
  }

  /// A null.
  package mutating func appendNull() { builder.appendNull() }

  /// Whether the column keeps its texts as codes into a dictionary (until too many differ).
  package var isCoded: Bool { builder.isCoded }

  /// A text (valid UTF-8), and the code it is kept under, for ``appendAgain(code:)``; `nil` once
  /// the column keeps its texts plain (too many of them differ).
  package mutating func appendGivingCode(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt16? {
    append(bytes)
    return builder.lastCode
  }

  /// The text kept under `code` again; `false` (nothing appended) once the column keeps its
  /// texts plain, when the caller appends the text itself.
  package mutating func appendAgain(code: Int32) -> Bool { builder.appendAgain(code: code) }

  /// The texts kept under codes again, `codes[index]` for each of `indices` (each a code
  /// ``appendGivingCode(_:)`` gave); `false` (nothing appended) once the column keeps its texts
  /// plain.
  package mutating func appendAgain(_ indices: UnsafeBufferPointer<UInt64>, codes: UnsafeBufferPointer<Int32>)
    -> Bool
  {
    builder.appendAgain(indices, codes: codes)
  }

  fileprivate mutating func finished() -> any Column { builder.finished() }
}

extension ColumnTable {
  /// A table of the columns `columns`, named `names` (repeats named apart by
  /// ``ColumnNames/unique(_:)``), each `rowCount` rows long.
  package convenience init(names written: [String], rowCount: Int, columns: [ReadColumn]) {
    let (names, renamed) = ColumnNames.unique(written)
    func mask(_ nulls: [Bool]?) -> NullMask? {
      guard let nulls, nulls.contains(true) else { return nil }
      var mask = NullMask(count: rowCount)
      for (row, isNull) in nulls.enumerated() where isNull { mask.setNull(row) }
      return mask
    }
    let made: [any Column] = columns.map { column in
      switch column {
      case .ints(let values, let nulls): IntColumn(values, nulls: mask(nulls))
      case .doubles(let values, let nulls): DoubleColumn(values, nulls: mask(nulls))
      case .bools(let values): BoolColumn(values)
      case .dates(let values, let nulls): DateColumn(values, nulls: mask(nulls), type: .date)
      case .timestamps(let values, let nulls): DateColumn(values, nulls: mask(nulls), type: .timestamp)
      case .texts(var maker): maker.finished()
      }
    }
    self.init(schema: Schema(names), rowCount: rowCount, columns: made, renamed: renamed)
  }
}
