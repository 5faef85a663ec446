import DataSourceKit
import DataSourceKitRendering
import DataSourceKitValues

/// What the parser wanted where it found something else (`expected …, found …`): every such
/// phrase, worded here and nowhere else.
public enum Expected: Sendable, Equatable {
  // Statements
  case statementEnd
  case nameAfterLet
  case equalsAfterName
  case outputMode
  case helpTopic
  case settingName
  case settingValue(setting: String)
  case filePath(after: String?)
  case segmentedSourceName
  case segmentNameAfterTo
  case name
  case editTarget(EditCommand)
  case position(after: String)
  case whereOrAt
  case fieldToSet
  case equalsAfterField
  case jsonAfterChangesAs
  case serveAddress
  case exportsAfterWith
  case beforeOrAgainst
  case rowCounts
  case pagedName
  case rowWindow

  // Providers
  case url
  case databasePath
  case postgresURL
  case tableName
  case sqlQuery
  case tableOrQuery(suggestion: String?)
  case listAfterArray
  case rangeAfterRange
  case rangeDots
  case rangeEnd
  case optionValue(ProviderOptionName)
  /// `with` after `starts` or `ends`.
  case patternWith(String)

  // Builders
  case pageSizeAfterSource
  case pageSize
  case withCell
  case withCard
  case columnCount
  case cardTemplate
  case cardSize(after: String)
  case cellsContinuation
  case whenOrElse
  case segmentName
  case colonAfterSegmentName
  case expressionStart
  case cellStyle
  case cellTemplate
  case accessory
  case templateAfter(String)

  // Pipelines and predicates
  case pipelineStep
  /// The count after `limit` or `offset`.
  case countAfter(String)
  /// A sample's seed: any whole number.
  case seed
  case placeholderMessages
  case fieldName
  case comparisonOperator
  case operand

  // Literals and punctuation
  case word(String)
  case symbol(Symbol)
  case value
  case listContinuation
  case recordFieldName
  case colonAfterFieldName
  case recordContinuation
  case fieldDefinition
  case joinCondition
  case aggregateDefinition
  /// `pivot` without its `on KEY`, or its `using AGGREGATE`.
  case pivotOn, pivotUsing
  case exportTo
  case exportFormat
  case joinName
  case templateHoleEnd
  case argumentContinuation
  case nullMarker
  case typeName

  public var text: String {
    switch self {
    case .statementEnd: "end of statement"
    case .nameAfterLet: "a name after 'let'"
    case .equalsAfterName: "'=' after the name"
    case .outputMode: "an output mode (\(RenderMode.allCases.map(\.rawValue).joined(separator: ", ")))"
    case .helpTopic: "a topic"
    case .settingName: "a setting"
    case .settingValue(let setting): "a value after '\(setting)'"
    case .filePath(let command): "a file path in quotes" + (command.map { " after '\($0)'" } ?? "")
    case .segmentedSourceName: "the name of a segmented source after 'switch'"
    case .segmentNameAfterTo: "a segment name after 'to'"
    case .name: "a name"
    case .editTarget(let command):
      switch command {
      case .insert: "the provider to insert into"
      case .delete: "the provider to delete from"
      case .update: "the provider to update"
      case .move: "the provider whose item moves"
      }
    case .position(let word): "a position after '\(word)'"
    case .whereOrAt: "'where PREDICATE' or 'at N'"
    case .fieldToSet: "a field to set"
    case .equalsAfterField: "'=' after the field"
    case .jsonAfterChangesAs: "'json' (changes print as text or JSON)"
    case .serveAddress: "a port or \"HOST:PORT\" (serve v on 8000, serve v on \"0.0.0.0:8000\")"
    case .exportsAfterWith: "'exports' (save \"PATH\" with exports also replays the exports)"
    case .beforeOrAgainst:
      "'before' and the rows of each section (check \"PATH\" before [3, 2] after [4, 2]), or 'against' and a view's name"
    case .rowCounts: "the rows of each section as a list of counts, such as [36, 4]"
    case .pagedName: "the name of a paged provider or table"
    case .rowWindow: "a row range such as 10..20"
    case .url: "a URL in quotes after 'http'"
    case .databasePath: "a database path in quotes after 'sqlite'"
    case .postgresURL: "a server URL in quotes after 'postgres', as \"postgresql://USER@HOST/DATABASE\""
    case .tableName: "a table name after 'table'"
    case .sqlQuery: "an SQL query in quotes after 'query'"
    case .tableOrQuery(let suggestion):
      "'table NAME' or 'query \"SELECT …\"' after the database path"
        + (suggestion.map { "; did you mean '\($0)'?" } ?? "")
    case .listAfterArray: "a list such as [1, 2, 3] after 'array'"
    case .rangeAfterRange: "a range such as 1..100 after 'range'"
    case .rangeDots: "'..' in the range"
    case .rangeEnd: "the end of the range"
    case .patternWith(let word): "'with' after '\(word)', as in: name \(word) with \"A\""
    case .optionValue(let option):
      switch option {
      case .key: "a field name after 'key'"
      case .timeout: "a number of seconds after 'timeout'"
      case .maxsize: "a number of megabytes after 'maxsize'"
      case .redirects: "'any' after 'redirects' (redirects within the URL's host are always followed)"
      case .delimiter, .at: "a string after '\(option.rawValue)'"
      case .header: "true or false after 'header', as in: header false (the first row is data)"
      case .skip: "a number of lines after 'skip', as in: skip 2"
      case .member: "the file of the archive to read after 'member', as in: member \"flights.csv\""
      case .null: "texts to read as null after 'null', as in: null \"NA\", \"N/A\""
      case .types: "field types after 'types', as in: types {zip: text, day: date \"%b %d %Y\"}"
      }
    case .pageSizeAfterSource: "'size N' after the source, as in: paged people size 20"
    case .pageSize: "a page size (1 or more)"
    case .withCell: "'with' and a cell, as in: table P with cell basic \"{name}\""
    case .withCard: "'with' and a card, as in: grid P with card \"{name}\" width 16 height 2"
    case .columnCount: "a number of columns (1 or more)"
    case .cardTemplate: "a template in quotes, such as \"{name}\\n{team}\""
    case .cardSize(let option): "a size from 1 to 200 after '\(option)'"
    case .cellsContinuation: "',' and another 'when', or ', else CELL'"
    case .whenOrElse: "'when' or 'else'"
    case .segmentName: "a segment name, as in: segmented all: people, menu: menu"
    case .colonAfterSegmentName: "':' after the segment name"
    case .expressionStart: "a value, a name or a provider"
    case .cellStyle: "a cell style (\(CellStyle.allCases.map(\.rawValue).joined(separator: ", ")))"
    case .cellTemplate: "a template in quotes, such as \"{name}\""
    case .accessory: "an accessory (\(CellAccessory.namesInHelpOrder.joined(separator: ", ")))"
    case .templateAfter(let word): "a template in quotes after '\(word)'"
    case .pipelineStep: "a stage after '|'"
    case .countAfter(let word): "a number of items after '\(word)'"
    case .seed: "a whole number after 'seed' (any one: the same number chooses the same items)"
    case .placeholderMessages: "'empty \"…\"' or 'error \"…\"' after 'placeholder'"
    case .fieldName: "a field name"
    case .comparisonOperator: "'==' to compare"
    case .operand: "a field or a value"
    case .word(let word): "'\(word)'"
    case .symbol(let symbol): "'\(symbol.rawValue)'"
    case .value: "a value"
    case .listContinuation: "',' or ']' in the list"
    case .recordFieldName: "a field name in the record"
    case .colonAfterFieldName: "':' after the field name"
    case .recordContinuation: "',' or '}' in the record"
    case .templateHoleEnd: "'}' or ':FORMAT' after the expression"
    case .fieldDefinition: "'NAME = EXPRESSION', as in: extend total = price * qty"
    case .exportTo: "'to \"PATH\"', as in: export people to \"people.csv\""
    case .exportFormat: "a format: " + Vocabulary.choices(ExportFormat.allCases.map(\.rawValue))
    case .aggregateDefinition:
      "'NAME = AGGREGATE' after with, as in: group by team with n = count(), oldest = max(age)"
    case .pivotOn: "'on' and the key whose values become fields, as in: pivot on year using sum(population)"
    case .pivotUsing:
      "'using' and the aggregates, as in: pivot on year using sum(population) group by country"
    case .joinCondition: "'on LEFT == RIGHT', as in: join teams on team == teams.name as info"
    case .joinName: "'as NAME' for the matched item, as in: join teams on team == name as info"
    case .argumentContinuation: "',' or ')' after the argument"
    case .nullMarker: "a text in quotes after 'null'"
    case .typeName: "a type (\(DeclaredType.allowed.map(\.rawValue).joined(separator: ", ")))"
    }
  }
}

extension CellAccessory {
  /// The accessories as messages and help list them: the visible ones first, `none` last.
  static var namesInHelpOrder: [String] {
    allCases.filter { $0 != .none }.map(\.rawValue) + [CellAccessory.none.rawValue]
  }
}

/// The statements that edit a provider's items.
public enum EditCommand: String, Sendable {
  case insert, delete, update, move
}
