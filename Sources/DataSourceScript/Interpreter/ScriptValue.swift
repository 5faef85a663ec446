import DataSourceKit
import DataSourceKitValues

/// What a name can be bound to.
enum ScriptValue {
  case provider(ProviderValue)
  case presenter(PresenterSpec)
  case table(any SectionedDataSource<Value, TableCell>)
  case scalar(Value)

  /// How error messages name the kind ("a provider", "a table", and so on).
  var kindDescription: String {
    switch self {
    case .provider: "a provider"
    case .presenter: "a cell"
    case .table: "a table"
    case .scalar(let value): value.typeName == "int" ? "an int value" : "a \(value.typeName) value"
    }
  }

  /// The top of the composition the value draws on (its providers are under it), if any.
  var compositionRoot: Any {
    switch self {
    case .provider(let value): value.provider
    case .table(let table): table
    case .presenter, .scalar: ()
    }
  }
}

/// A provider with what the language knows of it besides the engine object.
struct ProviderValue {
  var provider: any DataProvider<Value>
  /// How errors name it: the binding it came from, else its source (`csv "people.csv"`).
  var displayName: String
  /// The field that identifies an item (`key id`), used by diffing.
  var key: String?
  /// The kind of source at the bottom of the chain (csv, json, array, …); `nil` for items that
  /// come from no one source (a table's, in a template).
  var sourceKind: ProviderKind?
}

/// A presenter before it is joined to a provider: its templates are checked against the
/// provider's fields when a table is made.
struct CellSpec {
  var style: CellStyle
  var text: Template
  var detail: Template?
  var accessory: CellAccessory
  /// The cell as written, for `describe`.
  var label: String
  /// The kind of cell: the name it was bound to, else its style.
  var reuseIdentifier: String
  /// The statement it was written in: its templates' ranges point into that statement only.
  var statement: Int
  /// Set for a card: its size in a grid (width in columns, height in lines).
  var cardSize: (width: Int, height: Int)?
}

/// One cell for every item, or a cell chosen per item (`cells when … use …, else …`).
indirect enum PresenterSpec {
  case cell(CellSpec)
  case dispatch(
    cases: [(predicate: ValueExpression, presenter: PresenterSpec)], fallback: PresenterSpec, label: String,
    statement: Int)

  var label: String {
    switch self {
    case .cell(let cell): cell.label
    case .dispatch(_, _, let label, _): label
    }
  }
}
