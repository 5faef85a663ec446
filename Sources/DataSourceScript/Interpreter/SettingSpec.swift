import DataSourceKitRendering
import DataSourceKitValues

/// What `set NAME VALUE` was given: a word (`on`, `box`, `"iPhone SE"`) or a number.
enum SettingValue: Equatable, Sendable {
  case word(String)
  case number(Int)

  /// The value as typed, for messages.
  var text: String {
    switch self {
    case .word(let w): w
    case .number(let n): String(n)
    }
  }
}

/// One setting of `set`, declared once: the values it takes, how it reads one, how `set` with
/// no argument shows it, and how `save` writes it when it differs from how the run began.
///
/// ``SettingName/spec`` answers for each setting with a `switch` and no `default`, so a setting
/// added to the vocabulary does not compile until it has all of these; `set`, `save`,
/// completion and `help set` read them from here.
struct SettingSpec: Sendable {
  /// The words it takes besides numbers (completion, hints).
  let values: [String]
  /// How `help set` writes it: `set width N|auto`.
  let syntax: String
  /// Sets the value in `settings`; `false` when the value is not one it takes.
  let apply: @Sendable (inout Settings, SettingValue) -> Bool
  /// The value now, as `set` lists it (`auto (80)` where the environment decides).
  let shown: @Sendable (Settings, Environment) -> String
  /// The value as `set NAME VALUE` writes it again, or `nil` while it is as in `start` (the
  /// settings the run began with: the defaults, or what the command line set).
  let saved: @Sendable (_ settings: Settings, _ start: Settings) -> String?

  /// A setting whose value is one of `cases` (`mode`, `color`, `appearance`).
  static func choice<Choice: RawRepresentable & CaseIterable & Equatable & Sendable>(
    _ name: String, _ keyPath: WritableKeyPath<Settings, Choice> & Sendable,
    parse: @escaping @Sendable (String) -> Choice?,
    show: @escaping @Sendable (Choice) -> String = { $0.rawValue }
  ) -> SettingSpec where Choice.RawValue == String {
    let values = Choice.allCases.map(\.rawValue)
    return SettingSpec(
      values: values, syntax: "set \(name) " + values.joined(separator: "|"),
      apply: { settings, value in
        guard case .word(let w) = value, let choice = parse(w) else { return false }
        settings[keyPath: keyPath] = choice
        return true
      },
      shown: { settings, _ in show(settings[keyPath: keyPath]) },
      saved: { settings, start in
        let now = settings[keyPath: keyPath]
        return now == start[keyPath: keyPath] ? nil : now.rawValue
      })
  }

  /// A setting that is on or off (`timer`, `stats`, `echo`).
  static func flag(_ name: String, _ keyPath: WritableKeyPath<Settings, Bool> & Sendable) -> SettingSpec {
    SettingSpec(
      values: ["on", "off"], syntax: "set \(name) on|off",
      apply: { settings, value in
        guard case .word(let w) = value, w == "on" || w == "off" else { return false }
        settings[keyPath: keyPath] = w == "on"
        return true
      },
      shown: { settings, _ in settings[keyPath: keyPath] ? "on" : "off" },
      saved: { settings, start in
        settings[keyPath: keyPath] == start[keyPath: keyPath]
          ? nil : (settings[keyPath: keyPath] ? "on" : "off")
      })
  }

  /// A number in `range`, or `auto` (`nil`: the environment decides, as `automatic` shows).
  static func number(
    _ name: String, _ keyPath: WritableKeyPath<Settings, Int?> & Sendable, in range: ClosedRange<Int>,
    automatic: @escaping @Sendable (Settings, Environment) -> String
  ) -> SettingSpec {
    SettingSpec(
      values: ["auto"], syntax: "set \(name) N|auto",
      apply: { settings, value in
        switch value {
        case .word("auto"): settings[keyPath: keyPath] = nil
        case .number(let n) where range.contains(n): settings[keyPath: keyPath] = n
        default: return false
        }
        return true
      },
      shown: { settings, environment in
        settings[keyPath: keyPath].map(String.init) ?? "auto (\(automatic(settings, environment)))"
      },
      saved: { settings, start in
        let now = settings[keyPath: keyPath]
        return now == start[keyPath: keyPath] ? nil : now.map(String.init) ?? "auto"
      })
  }
}

extension SettingName {
  /// The setting's one declaration.
  var spec: SettingSpec {
    switch self {
    case .mode:
      .choice("mode", \.mode, parse: { RenderMode(rawValue: $0) })
    case .width, .maxwidth:
      // maxwidth is DuckDB's name for the same setting.
      .number(rawValue, \.width, in: 20...1000) { settings, environment in
        String(settings.effectiveWidth(environment))
      }
    case .colwidth:
      .number("colwidth", \.columnWidth, in: 3...1000) { _, _ in "texts as wide as the table allows" }
    case .maxrows:
      .number("maxrows", \.maxRows, in: 0...Int.max) { settings, environment in
        String(settings.effectiveMaxRows(environment))
      }
    case .color:
      .choice("color", \.color, parse: { Settings.ColorChoice(rawValue: $0) })
    case .timer: .flag("timer", \.timer)
    case .stats: .flag("stats", \.stats)
    case .echo: .flag("echo", \.echo)
    case .appearance:
      .choice("appearance", \.appearance, parse: { Settings.Appearance(rawValue: $0.lowercased()) })
    case .device:
      .choice(
        "device", \.device, parse: { Device(named: $0) }, show: { "\($0.displayName) (\($0.width) points)" })
    }
  }

  /// Another name for a setting listed under its own (`maxwidth` for `width`).
  var isAlias: Bool { self == .maxwidth }
}
