import DataSourceKit
import DataSourceKitRendering
import DataSourceKitValues

/// Every message the language shows, in one place: lowercase, no trailing period, with a "did you
/// mean" where a likely fix is known.
///
/// The switch has no `default`, so a new case cannot ship without its text.
public enum DiagnosticMessage: Sendable, Equatable {
  // Lexer
  case unexpectedCharacter(Character)
  case unterminatedString
  case invalidEscape(String)
  case integerOutOfRange(String)
  case malformedUnicodeEscape
  case notAUnicodeScalar(UInt32)
  case characterNotInName(Unicode.Scalar)
  case invalidNumber(String)
  case nestingTooDeep(limit: Int)
  case expressionTooDeep(limit: Int)
  case rangeTooLarge(lower: Int, upper: Int)
  case unclosedBracket(String)

  // Parser
  case expected(Expected, found: String)
  /// A stage's word where a statement should end: its `|` is missing.
  case stageWithoutPipe(String)
  /// `pivot` without `group by` over items whose fields are not known.
  case pivotNeedsKeys
  /// A field's name written in double quotes, as SQL names a column.
  case fieldNameInQuotes(String)
  case unknownCommand(String, suggestion: String?)
  /// Another shell's command (`.tables`, `\dt`, `SELECT`, `show X > FILE`), and the dsh way.
  case foreignCommand(String, tool: String, instead: String)
  case unknownOption(String, command: String, options: [String], suggestion: String?)
  case unknownCellStyle(String, suggestion: String?)
  case unknownAccessory(String, suggestion: String?)
  case unknownRenderMode(String, suggestion: String?)
  case unknownTableStyle(String?, suggestion: String?)
  case rowsOfSwiftProgram
  /// `sqlite "FILE"` where a provider goes: which tables it has.
  case databaseWithoutTable(source: String, path: String, tables: [String])
  /// `serve X on …` with an address that names no port.
  case invalidServeAddress(String)
  /// `serve` could not start or stop, for the reason given.
  case serveFailed(String)
  /// `browse` with no full screen: a script, a pipe, `TERM=dumb`.
  case browseNeedsTerminal
  case swiftProgramUnsupported(what: String, binding: String?)
  case conflictingTableStyles(String, String, firstChild: String)
  case unknownSetting(String, suggestion: String?)
  case invalidSettingValue(setting: SettingName, value: String)
  case unterminatedQuotedName
  case duplicateField(String)
  case selectItself
  case unknownType(String, suggestion: String?)
  case formatForType(String)
  case unknownFormatCode(String)
  case unknownHelpTopic(String, suggestion: String?)
  /// `join inner other on …`: a join's kind written before the other side, as SQL writes it;
  /// `other` is that side as written.
  case joinKindFirst(String, other: String)
  /// `show seattle-weather`: a name written with a dash, which names never hold.
  case dashInName(String)
  /// `group by team with count()`: an aggregate without the name of the field it makes.
  case unnamedAggregate(String, arguments: String)
  /// `in ("a", "b")`: a list written in parentheses, as SQL writes one.
  case listInParentheses(String)
  /// `| age > 30` or `| total = …`: a condition without `where`, a field without `extend`.
  case stageWordMissing(String, assigns: Bool)
  case unknownPipelineStep(String, suggestion: String?)
  case stageAfterCell(String)
  case duplicateOption(String)
  case optionValueTooLarge(String, most: Int, unit: String)
  case optionNeedsURL(String, command: String)
  case reservedWord(String)

  // Templates
  case unclosedTemplateField
  case unmatchedTemplateBrace
  case emptyTemplateField
  case invalidFormatSpec(String)

  // Names, types and fields
  case unknownName(String, suggestion: String?)
  /// A field not among the fields known; with no near name, the fields are listed when they are
  /// few.
  case unknownField(String, in: String, suggestion: String?, fields: [String] = [])
  case unknownFieldOneColumn(String, in: String, header: String, delimiter: String)
  case expectedKind(ExpectedKind, found: String)
  case stageNeedsProvider(stage: String, found: String)
  case decoratorNeedsTable(decorator: String, found: String)
  case emptyRange(lower: Int, upper: Int)
  /// `window` is the range as written (`11..`, `-5..3`).
  case rowsOutsideView(window: String, total: Int)
  /// A negative count after `limit` or `offset`.
  case negativeCount(String, Int)
  case delimiterNotOneCharacter(String)
  /// A source named `"-"` where standard input is not data.
  case standardInputNotData(StandardInput)

  // Segments, views and sessions
  case notSegmented(String, found: String)
  case duplicateSegment(String)
  case unknownSegment(String, in: String, segments: [String], suggestion: String?)
  case notShownYet(String)
  case nothingShownYet
  case invalidBatch(BatchUpdateError)
  case unreadableBatch(path: String, BatchParseError)
  case negativeRowCount(Int)
  case cannotWrite(path: String, reason: String)
  case notEditable(String, found: String)
  case readOnly(String, store: String)
  /// `what` is written as it reads: "'feed'", "the table under '| more'".
  /// `name` is the binding; `nil` for the table under `| more`.
  case notPaged(name: String?)
  case pageTemplateWithoutPaged(url: String)
  case refusedBySafeMode(SafeModeRefusal)
  case positionOutside(Int, count: Int, what: String)
  case tooLargeToEdit(String, count: Int, limit: Int)
  case fieldOfPlainItems(String, type: String)
  case viewTooLargeToDiff(String, rows: Int, limit: Int)
  case tooManyRowsToPrint(Int, limit: Int)
  case notARecord(String, found: String)
  case pathIntoScalar(path: String, field: String, type: String)
  case typeMismatch(field: String, holds: String, value: String, type: String)
  // Expressions
  /// Two values that cannot be compared: `left` and `right` describe each side
  /// (`body_mass_g (text)`, `6000 (int)`), `fix` what would make it work.
  case cannotCompare(left: String, right: String, fix: TypeFix?)
  case cannotCombine(operator: String, left: String, right: String, fix: TypeFix?)
  case notABool(String, fix: TypeFix?)
  case unknownFunction(String, suggestion: String?)
  case functionArgumentCount(String, signature: String)
  case functionArgumentType(String, argument: String, signature: String)
  case functionMixedResults(String, String, String)
  /// An expression of constants whose value is null with a note: the note's words.
  case constantWithoutValue(String, why: String)
  /// An aggregate (`sum(x)`) where one item is computed: a cell, `where`, `extend`.
  case aggregateOutsideGroup(String)
  case windowOutsideExtend(String)
  case samplePercent(Double)
  case runningList(String)
  case windowClauseWithoutWindow(String)
  /// `extend r = random() by x`: random() draws per item, so an order or section changes nothing.
  case windowClauseOnRandom(String)
  /// `x matches "(ab"`: a written pattern that is no regular expression.
  case invalidRegularExpression(String)
  case windowInWindow(String, outer: String)
  case aggregateInAggregate(String, outer: String)
  /// An aggregate in a header of a composed or segmented table, whose sections come from several
  /// sources.
  case aggregateOverSeveralSources(String)
  /// A `group by` or `distinct` key that is not a field, without `as NAME`.
  case groupKeyNeedsName
  case countStar
  /// A call in `group by … with` that is no aggregate (`mean(x)`).
  case unknownAggregate(String, suggestion: String?)
  case unknownExportFormat(String, suggestion: String?)
  /// `export` to a path whose extension names no format, without `as`.
  case exportFormatUnknown(path: String)
  /// `export` of a table of cells to Parquet, which writes fields.
  case parquetNeedsFields
  /// `export` to Parquet of a field with no one flat type: its name, and what it holds.
  case parquetColumnType(field: String, holds: [String], nested: Bool)
  /// A `with` field of `group by` that is not one aggregate.
  case groupFieldNotAggregate(String)
  case notAList(String)
  case negateNonNumber(String)
  case noBaseline(String)

  // Files and data
  case dataSource(DataSourceError)
  case sourceCycle(chain: [String])
  case sourceDepth(limit: Int)
  case decorationDepth(limit: Int)
  case expandedSize(Int, limit: Int)
  case nestingDepth(limit: Int)
  case stageDepth(limit: Int)
  case explainOfCommand(String)
  case sourcesTooDeep(limit: Int)
  case interrupted

  // Bugs
  /// An error no message covers: a bug in dsh, reported as one.
  case internalError(String)

  public var text: String {
    switch self {
    case .unexpectedCharacter(let c): "unexpected character '\(c)'"
    case .unterminatedString: "string is never closed; add its closing quote before the end of the line"
    case .malformedUnicodeEscape: "a \\u escape is hex digits in braces, as \\u{1F600}"
    case .notAUnicodeScalar(let value):
      "U+\(String(value, radix: 16, uppercase: true)) is not a Unicode character (surrogates D800–DFFF and values past 10FFFF are not)"
    case .characterNotInName(let scalar):
      "\(Self.codePoint(scalar)) cannot be part of a name (names hold letters, digits, marks and symbols)"
    case .invalidEscape(let e): "unknown escape '\\\(e)' in string; use \\n, \\t, \\\", \\\\ or \\u{…}"
    case .invalidNumber(let n): "'\(n)' is not a number"
    case .integerOutOfRange(let n):
      "\(n.count > 30 ? String(n.prefix(27)) + "…" : n) is beyond 64-bit integers (±9223372036854775807); write it as a string to keep it exact"
    case .nestingTooDeep(let limit): "brackets nested deeper than \(limit) levels"
    case .expressionTooDeep(let limit):
      "expression nested deeper than \(limit) levels; split it into steps (extend a part as a field, then use the field)"
    case .rangeTooLarge(let lower, let upper):
      "range \(lower)..\(upper) has more items than a count can hold (\(Int.max)); make it smaller"
    case .unclosedBracket(let bracket): "'\(bracket)' is never closed"
    case .expected(let what, let found): "expected \(what.text), found \(found)"
    case .fieldNameInQuotes(let text):
      "expected a field name, found a string; a field whose name has spaces or signs is written in backquotes: `\(text.replacingOccurrences(of: "`", with: "``"))`"
    case .pivotNeedsKeys:
      "the items' fields are not known, so pivot cannot group by the others: name the keys, as in: pivot on year using sum(population) group by country"
    case .stageWithoutPipe(let word):
      "expected end of statement, found '\(word)'; a stage follows '|', as in: show people | \(StageKind(rawValue: word)?.phrase ?? word) …"
    case .foreignCommand(let command, let tool, let instead):
      switch tool {
      case "SQL": "'\(command)' starts SQL, which dsh does not read as a statement; \(instead)"
      case ForeignCommand.sqlWordTool: "'\(command)' is SQL's, not dsh's; in dsh: \(instead)"
      case ForeignCommand.spelledOutTool: "'\(command)' is written \(instead) in dsh"
      default: "'\(command)' is \(tool)'s, not dsh's; in dsh: \(instead)"
      }
    case .unknownCommand(let name, let suggestion):
      "unknown command or name '\(name)'" + Self.didYouMean(suggestion)
    case .unknownOption(let option, let command, let options, let suggestion):
      "unknown option '\(option)' for \(command)"
        + (suggestion.map { "; did you mean '\($0)'?" }
          ?? (options.isEmpty ? "" : "; options: " + options.joined(separator: ", ")))
    case .unknownCellStyle(let name, let suggestion):
      "unknown cell style '\(name)'"
        + Self.didYouMean(
          suggestion, otherwise: "; styles: " + CellStyle.allCases.map(\.rawValue).joined(separator: ", "))
    case .unknownAccessory(let name, let suggestion):
      "unknown accessory '\(name)'"
        + Self.didYouMean(
          suggestion, otherwise: "; accessories: " + CellAccessory.namesInHelpOrder.joined(separator: ", "))
    case .unknownRenderMode(let name, let suggestion):
      "unknown output mode '\(name)'"
        + Self.didYouMean(
          suggestion,
          otherwise: "; modes: " + (RenderMode.allCases.map(\.rawValue) + ["swift"]).joined(separator: ", "))
    case .invalidServeAddress(let text):
      "'\(text)' is not a port or HOST:PORT; serve v on 8000, or serve v on \"0.0.0.0:8000\" to listen beyond this machine"
    case .serveFailed(let reason):
      reason
    case .databaseWithoutTable(let source, let path, let tables):
      tables.isEmpty
        ? "'\(path)' is a database with no tables"
        : "'\(path)' is a database of \(tables.count == 1 ? "1 table" : "\(tables.count) tables") (\(tables.prefix(8).joined(separator: ", "))\(tables.count > 8 ? ", …" : "")): name one, \(source) \"\(path)\" table \(tables[0]); describe \(source) \"\(path)\" shows their columns and rows"
    case .browseNeedsTerminal:
      "browse needs a terminal to draw on (standard output is not one, or TERM is dumb); "
        + "print a window instead: show X rows A..B"
    case .rowsOfSwiftProgram:
      "a Swift program builds the whole view: rows A..B does not go with as swift"
    case .swiftProgramUnsupported(let what, let binding):
      "show as swift cannot write \(what) yet\(binding.map { " (in the definition of '\($0)')" } ?? "")"
    case .unknownTableStyle(let name, let suggestion):
      (name.map { "unknown table style '\($0)'" } ?? "expected a table style after 'style'")
        + Self.didYouMean(
          suggestion, otherwise: "; styles: " + TableStyle.allCases.map(\.rawValue).joined(separator: ", "))
    case .conflictingTableStyles(let first, let second, let firstChild):
      "this table asks for style \(second), but '\(firstChild)' asks for \(first): one table view draws a "
        + "composition, so give them the same style"
    case .unknownSetting(let name, let suggestion):
      "unknown setting '\(name)'"
        + Self.didYouMean(
          suggestion, otherwise: "; settings: " + SettingName.allCases.map(\.rawValue).joined(separator: ", ")
        )
    case .invalidSettingValue(let setting, let value):
      "'\(value)' is not a value for \(setting.rawValue); expected \(Self.expectedValue(of: setting))"
    case .unknownHelpTopic(let topic, let suggestion):
      "no help for '\(topic)'"
        + Self.didYouMean(suggestion, otherwise: "; type 'help' for the list of topics")
    case .unknownPipelineStep(let word, let suggestion):
      "unknown stage '\(word)'"
        + Self.didYouMean(
          suggestion,
          otherwise: "; stages: " + StageKind.allCases.map(\.phrase).joined(separator: ", ")
            + "; decorations: "
            + DecorationKind.allCases.map(\.rawValue).joined(separator: ", "))
    case .joinKindFirst(let kind, let other):
      "the kind of join goes last in dsh, after the match's name: join \(other) on … as NAME \(kind)"
    case .dashInName(let written):
      "a name holds no '-'; did you mean '\(written.replacingOccurrences(of: "-", with: "_"))'? (dsh binds a file named \(written).csv under that name)"
    case .unnamedAggregate(let name, let arguments):
      "an aggregate after with names the field it makes, as in: with \(name == "count" ? "n" : name) = \(name)\(arguments)"
    case .listInParentheses(let list):
      "a list is written in brackets in dsh: in \(list)"
    case .stageWordMissing(let word, assigns: false):
      "'\(word)' starts a condition, not a stage: a condition follows where (| where \(word) …)"
    case .stageWordMissing(let word, assigns: true):
      "'\(word)' starts a field, not a stage: a new field follows extend (| extend \(word) = …), a test where (| where \(word) == …)"
    case .stageAfterCell(let stage):
      "'\(stage)' works on a provider; put it before 'with', as in: table P | \(stage) … with CELL"
    case .duplicateOption(let option): "option '\(option)' is given twice"
    case .optionValueTooLarge(let option, let most, let unit): "\(option) is at most \(most) \(unit)"
    case .optionNeedsURL(let option, let command):
      "\(option) limits a request: it goes with a URL (\(command) \"https://…\" \(option) …), not a file on this machine"
    case .reservedWord(let word): "'\(word)' is a reserved word and cannot name a binding"
    case .unclosedTemplateField: "'{' in template is never closed; write '{{' for a literal brace"
    case .unmatchedTemplateBrace: "'}' in template has no '{'; write '}}' for a literal brace"
    case .emptyTemplateField: "empty field '{}' in template; name a field, or use {.} for the item itself"
    case .invalidFormatSpec(let spec):
      spec.hasPrefix("|")
        ? "invalid format '\(spec)'; a count's words are two, one and many, as in {count|person|people}"
        : "invalid format '\(spec)'; expected [<|>|^][width][,][.precision][f|e|g|%], as in {price:>8.2f}"
    case .unknownName(let name, let suggestion): "no binding named '\(name)'" + Self.didYouMean(suggestion)
    case .unknownField(let field, let source, let suggestion, let fields):
      "no field '\(field)' in \(source)"
        + Self.didYouMean(
          suggestion,
          otherwise: fields.isEmpty || fields.count > 12
            ? "" : "; its fields are " + fields.map { "'\($0)'" }.joined(separator: ", "))
    case .unknownFieldOneColumn(let field, let source, let header, let delimiter):
      "no field '\(field)' in \(source), which was read as one column, '\(header.count > 40 ? header.prefix(39) + "…" : header)': "
        + "its fields look separated by \(delimiter == "\t" ? "tabs" : "'\(delimiter)'"); add: delimiter \"\(delimiter == "\t" ? "\\t" : delimiter)\""
    case .expectedKind(let expected, let found): "expected \(expected.text), found \(found)"
    case .stageNeedsProvider(let stage, let found):
      "'\(stage)' works on a provider, not on \(found)"
    case .decoratorNeedsTable(let decorator, let found):
      "'\(decorator)' decorates a table or composed source, not \(found); make one with: table P with CELL | \(decorator) …"
    case .emptyRange(let lower, let upper):
      "range \(lower)..\(upper) is backwards; write the smaller bound first"
    case .rowsOutsideView(let window, let total):
      "rows \(window) are outside the view, which has \(total) row\(total == 1 ? "" : "s") (0..\(total))"
    case .negativeCount(let word, let n): "\(word) must be zero or more, not \(n)"
    case .delimiterNotOneCharacter(let d):
      "the delimiter is one ASCII character other than a line end or a quote, such as \";\" or \"\\t\"; not \"\(TextWidth.displayable(d))\""
    case .standardInputNotData(let input):
      switch input {
      case .statements:
        "standard input holds the statements being run, so \"-\" cannot read data from it; pipe the data in and give the statements with -c or a script file: cat f.csv | dsh -c 'show csv \"-\"'"
      case .terminal:
        "standard input is the terminal; \"-\" reads data piped in, as in: cat f.csv | dsh -c 'show csv \"-\"'"
      case .data, .unavailable:
        "this session has no standard input to read; \"-\" reads data piped into dsh, as in: cat f.csv | dsh -c 'show csv \"-\"'"
      }
    case .notSegmented(let name, let found):
      "'\(name)' is \(found), not a segmented source; make one with: segmented NAME: TABLE, …"
    case .unknownSegment(let name, let source, let segments, let suggestion):
      "'\(source)' has no segment '\(name)'"
        + Self.didYouMean(suggestion, otherwise: "; its segments: " + segments.joined(separator: ", "))
    case .duplicateSegment(let name): "segment '\(name)' is given twice; each segment needs its own name"
    case .notShownYet(let name): "'\(name)' has not been shown yet; 'show \(name)' first"
    case .nothingShownYet: "nothing has been shown yet"
    case .invalidBatch(let error): "the view refuses the update: \(error.description)"
    case .negativeRowCount(let count):
      "a section holds no fewer than 0 rows, not \(count): the counts are the rows of each section, such as [36, 4]"
    case .unreadableBatch(let path, let error):
      "\(path):\(error.line):\(error.column): \(error.message)"
    case .cannotWrite(let path, let reason): "cannot write '\(path)': \(reason)"
    case .notEditable(let name, let found):
      "'\(name)' is \(found), which cannot be edited; edit the provider it comes from (a list, csv, json or range)"
    case .refusedBySafeMode(let refusal): "--safe refuses \(refusal.text)"
    case .pageTemplateWithoutPaged(let url):
      "the URL has {page} or {offset}, so it is fetched a page at a time; write: paged http \"\(url)\" size N"
    case .notPaged(let name):
      "\(name.map { "'\($0)'" } ?? "the table under '| more'") shows no paged provider; make one with: paged SOURCE size N"
    case .readOnly(let name, let store):
      "'\(name)' is \(store): databases are opened read-only and never written"
    case .positionOutside(let position, let count, let what):
      "position \(position) is outside \(what), which has \(count) item\(count == 1 ? "" : "s") (0..\(count))"
    case .tooManyRowsToPrint(let rows, let limit):
      "the view has \(rows) rows; one show prints at most \(limit): show a part with 'rows A..B', or '| limit N'"
    case .viewTooLargeToDiff(let name, let rows, let limit):
      "'\(name)' shows \(rows) rows or more; changes are worked out for views of up to \(limit) rows"
    case .fieldOfPlainItems(let path, let type):
      "the items are \(type) values, not records, so '\(path)' would be null for every item; write '.' for the item itself"
    case .tooLargeToEdit(let name, let count, let limit):
      "'\(name)' has \(count) items; an edit copies them and is limited to \(limit); edit a smaller part: let part = \(name) | where …"
    case .pathIntoScalar(let path, let field, let type):
      "'\(field)' holds \(type) values, not records, so '\(path)' would be null for every item"
    case .unterminatedQuotedName:
      "a name in backquotes needs a closing ` on the same line, and something inside"
    case .duplicateField(let name): "field '\(name)' is given twice"
    case .selectItself: "'.' cannot be selected; name fields, or write NAME = . to keep the item as a field"
    case .unknownType(let name, let suggestion):
      "unknown type '\(name)'; types are \(DeclaredType.allowed.map(\.rawValue).joined(separator: ", "))"
        + Self.didYouMean(suggestion)
    case .formatForType(let type): "a format is for date and timestamp fields, not \(type)"
    case .unknownFormatCode(let code):
      "unknown format code '\(code)'; formats read \(CalendarDate.formatCodes)"
    case .cannotCompare(let left, let right, let fix):
      "cannot compare \(left) with \(right)" + (fix.map { "; \($0)" } ?? "")
    case .cannotCombine(let op, let left, let right, let fix):
      "cannot use '\(op)' on \(left) and \(right)" + (fix.map { "; \($0)" } ?? "")
    case .notABool(let what, let fix):
      "\(what) is not true or false" + (fix.map { "; \($0)" } ?? "")
    case .unknownFunction(let name, let suggestion):
      "unknown function '\(name)'" + Self.didYouMean(suggestion) + "; 'help expressions' lists them"
    case .functionArgumentCount(let name, let signature):
      "wrong number of arguments to \(name): it is \(signature)"
    case .functionArgumentType(let name, let argument, let signature):
      "\(name) does not take \(argument): it is \(signature)"
    case .constantWithoutValue(let written, let why):
      "\(written) has no value, in any row: \(why)"
    case .runningList(let text):
      "\(text) with by would give each item a list of every item before it (n² values): list without by gives each item its section's whole list, and group by … with l = list(x) one per group"
    case .samplePercent(let p):
      "sample takes a share from 0% to 100%, not \(Value.double(p).displayText)%"
    case .windowOutsideExtend("random"):
      "random() draws a value for each item once, where an extend stores it (read anywhere else it would change at every read): extend r = random(), then | where r < 0.1 or | sort by r"
    case .windowOutsideExtend(let name):
      "\(name)() is a window function (its value depends on the other items): it goes in extend, as extend r = \(name)() by score desc [within section]"
    case .windowClauseWithoutWindow(let name):
      "by … and within section order the window functions and aggregates of an extend field, and \(name) has none (rank(), row_number(), lag(x), sum(x), …); to order the items: | sort by …"
    case .windowClauseOnRandom(let name):
      "random() draws a value for each item from the seed and the item's key, so by … and within … change nothing in \(name): write extend \(name) = random(42), then | sort by \(name) to shuffle"
    case .invalidRegularExpression(let pattern):
      "\(QuotedLiteral.dsh.quoted(pattern)) is not a regular expression (an unclosed group or bracket, a quantifier with nothing before it, …): escape a special character with \\\\ (\"\\\\(\"), or match the text as written with contains"
    case .windowInWindow(let inner, let outer):
      "\(inner) is a window function or aggregate inside \(outer)(…), which takes a value of each item"
    case .aggregateOutsideGroup(let name):
      "\(name) is an aggregate of many items: it goes in a header, footer, title or caption ({\(name)(x)}), in group by … with n = \(name)(x), or in extend over the other items (share = x / sum(x), running = sum(x) by day)"
    case .aggregateInAggregate(let inner, let outer):
      "\(inner) is an aggregate inside \(outer)(…): an aggregate takes a value of each item"
    case .unknownExportFormat(let name, let suggestion):
      "unknown export format '\(name)'" + Self.didYouMean(suggestion)
        + "; formats: " + ExportFormat.allCases.map(\.rawValue).joined(separator: ", ")
    case .parquetNeedsFields:
      "a Parquet file holds fields, and a table of cells has none: export the provider it presents "
        + "(export p to \"p.parquet\"), or this table as csv, html or svg"
    case .parquetColumnType(let field, let holds, nested: true):
      "field '\(field)' holds \(holds.joined(separator: " and ")), and dsh writes flat Parquet columns: "
        + "leave it out (select) or write it as text (extend \(field) = text(\(field)))"
    case .parquetColumnType(let field, let holds, nested: false):
      "field '\(field)' holds values of \(holds.count) types (\(holds.joined(separator: ", "))), and a Parquet "
        + "column has one: make them one (extend \(field) = text(\(field))), or export as csv or json"
    case .exportFormatUnknown(let path):
      "cannot tell the format from '\(path)': name it, as in: export x to \"\(path)\" as csv ("
        + ExportFormat.allCases.map(\.rawValue).joined(separator: ", ") + ")"
    case .countStar:
      "count(*) is written count() here (count(x) counts the values of x that are not null)"
    case .unknownAggregate(let name, let suggestion):
      "unknown aggregate '\(name)'" + Self.didYouMean(suggestion)
        + "; aggregates: \(AggregateFunction.allCases.map(\.rawValue).joined(separator: ", "))"
    case .groupKeyNeedsName:
      "a key that is not a field needs a name, as in: group by year(joined) as year"
    case .groupFieldNotAggregate(let name):
      "\(name) must be one aggregate (\(AggregateFunction.callsText)); compute with the results after: | extend …"
    case .aggregateOverSeveralSources(let aggregate):
      "\(aggregate) needs the items of one table: put the header or footer on each table before compose or segmented"
    case .functionMixedResults(let name, let a, let b):
      "\(name) would give \(a) or \(b): give both the same type (text(x) or double(x))"
    case .notAList(let what): "'in' needs a list on its right, as in: x in [1, 2, 3]; found \(what)"
    case .negateNonNumber(let what): "'-' needs a number; found \(what)"
    case .typeMismatch(let field, let holds, let value, let type):
      "'\(field)' holds \(holds) values; \(value) is \(Self.withArticle(type)); set \(Self.withArticle(holds)) or null"
        + (holds == "int" && type == "double" ? " (round(x) or int(x) make an int)" : "")
    case .notARecord(let name, let found):
      "\(name) holds \(found) items, not records; only records have fields to set"
    case .noBaseline(let name):
      "'\(name)' has not been shown or watched yet; 'show \(name)' or 'watch \(name)' first"
    case .dataSource(.read(ReadError.fileNotFound(let path)))
    where path.hasPrefix(SampleData.prefix) && SampleData.directory == nil:
      "no such file '\(path)': the sample data was not found: \(SampleData.placesLooked); set DSH_SAMPLES to the folder that does"
    case .dataSource(let error): error.description
    case .sourceCycle(let chain):
      "'\(chain.last ?? "")' is already running (\(chain.joined(separator: " → "))); a script cannot source one that sources it"
    case .sourceDepth(let limit): "scripts sourced more than \(limit) deep"
    case .decorationDepth(let limit):
      "more than \(limit) decorations stacked on one table; each question a view asks passes through every one (compose the parts instead)"
    case .expandedSize(let size, let limit):
      "this composition stands for \(size == .max ? "more than \(Int.max)" : "\(size)") tables once the compositions inside it are expanded, more than \(limit); each count and layout visits every one (compose each part once)"
    case .nestingDepth(let limit):
      "compositions and decorations nested more than \(limit) deep; each question a view asks passes through every level (compose the parts side by side instead)"
    case .explainOfCommand(let command):
      command == "show"
        ? "explain takes what show shows: write explain without show (explain t | where …)"
        : "explain takes an expression (a source, a pipeline, a table), not '\(command)': explain the view the statement reads (explain t | where …)"
    case .stageDepth(let limit):
      "more than \(limit) stages over one source; each item read passes through every one (bind a grouped or joined result, or split the chain)"
    case .sourcesTooDeep(let limit):
      "sources nested more than \(limit) deep in one statement (compose inside compose …); bind the inner ones with let"
    case .interrupted: "interrupted"
    case .internalError(let detail):
      "internal error: \(detail); this is a bug in dsh, please report it with the statement that caused it"
    }
  }

  /// `an int`, `a date`, `text` (text is not counted).
  private static func withArticle(_ type: String) -> String {
    type == "text" ? "text" : article(type) + " " + type
  }

  /// "a" or "an" before a type's name.

  private static func article(_ word: String) -> String {
    word.first.map { "aeiou".contains($0) } == true ? "an" : "a"
  }

  /// What `set NAME` takes, as a hint.
  private static func expectedValue(of setting: SettingName) -> String {
    switch setting {
    case .width: "a number from 20 to 1000, or auto"
    case .maxwidth: "a number from 20 to 1000, or auto (DuckDB's name for set width)"
    case .colwidth: "the widest a column of text is drawn, from 3 to 1000 characters, or auto"
    case .maxrows: "a number of rows (0 shows all), or auto"
    case .device: "a device: " + Vocabulary.choices(Device.allCases.map(\.rawValue))
    case .mode, .color, .timer, .stats, .echo, .appearance: Vocabulary.choices(setting.values)
    }
  }

  /// `U+202E (RIGHT-TO-LEFT OVERRIDE)`: a character named, for one that may not show.
  static func codePoint(_ scalar: Unicode.Scalar) -> String {
    let hex = String(scalar.value, radix: 16, uppercase: true)
    let name = scalar.properties.name ?? scalar.properties.nameAlias
    return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + (name.map { " (\($0))" } ?? "")
  }

  private static func didYouMean(_ suggestion: String?, otherwise: String = "") -> String {
    suggestion.map { "; did you mean '\($0)'?" } ?? otherwise
  }
}
