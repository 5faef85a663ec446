import DataSourceKit

/// What a name can be bound to.
enum ScriptValue {
  case provider(ProviderValue)
  case cell(CellSpec)
  case table(any SectionedDataSource<Value>)
  case scalar(Value)

  /// How error messages name the kind ("a provider", "a table", and so on).
  var kindDescription: String {
    switch self {
    case .provider: "a provider"
    case .cell: "a cell"
    case .table: "a table"
    case .scalar(let value): value.typeName == "int" ? "an int value" : "a \(value.typeName) value"
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
  /// The kind of source at the bottom of the chain: csv, json, array, range.
  var sourceKind: String
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
}

/// A name's binding, in the order names were first bound.
struct Binding {
  var value: ScriptValue
  /// The statement's source text, as written.
  var definition: String
}
