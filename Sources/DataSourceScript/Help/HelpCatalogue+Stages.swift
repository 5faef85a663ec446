import DataSourceKit
import DataSourceKitSQLite
import DataSourceKitValues

extension HelpCatalogue {
  /// The topic of a stage: every stage word has one, or the catalogue does not compile.
  static func stageTopic(_ kind: StageKind) -> HelpTopic {
    switch kind {
    case .where:
      HelpTopic(
        name: "where", group: .stages, syntax: ["PROVIDER | where EXPRESSION"],
        summary:
          "Keeps the items for which the expression is true (see 'help expressions'). Comparisons: == != < <= > >=, contains (text or list; a contains b ignoring case compares their lower case), like and ilike (% any characters, _ one, the whole text; ilike ignoring case by Swift's lowercasing of both, so İ is i with a dot above), starts with, ends with, matches (an ICU regular expression found anywhere: ^ and $ anchor it; ICU's rules, not DuckDB's RE2, where they differ: \\w and [[:alpha:]] take every script, . matches no line break, $ also before a last newline), in [list], is null and is not null; combine with and, or, not and parentheses. A field is a name, a dotted path (a.b), a name in backquotes (`unit price`) or . (the item). Nulls compare as missing: only == null and != null are true for them. Comparing text with a number is an error, with a fix.",
        examples: [
          people + "\nshow people | where active == true and age >= 30",
          people + "\nshow people | where team in [\"Design\", \"Research\"] or not (name contains \"a\")",
          people + "\nshow people | where email contains \"GRACE\" ignoring case",
          people + "\nshow people | where name like 'A%' or email matches '^[k-m]' | select name, email",
        ])
    case .sort:
      HelpTopic(
        name: "sort", group: .stages, syntax: ["PROVIDER | sort by EXPRESSION [asc|desc], …"],
        summary:
          "Sorts the items in each section by one or more fields or expressions; the sort is stable and nulls sort last either way. Text sorts by code point (as SQLite and DuckDB), dates by day.",
        examples: [people + "\nshow people | sort by team, age desc"])
    case .section:
      HelpTopic(
        name: "section", group: .stages, syntax: ["PROVIDER | section by EXPRESSION [asc|desc]"],
        summary:
          "Groups the items into sections by a field or an expression: sections ordered by key, items keep their order inside a section, a null key is a section of its own (last).",
        examples: [
          people + "\nshow people | sort by name | section by team",
          people + "\nshow people | section by year(date(joined)) desc",
        ])
    case .limit:
      HelpTopic(
        name: "limit", group: .stages, syntax: ["PROVIDER | limit N"],
        summary: "Keeps the first N items, across sections.", examples: [people + "\nshow people | limit 2"])
    case .offset:
      HelpTopic(
        name: "offset", group: .stages, syntax: ["PROVIDER | offset N"],
        summary:
          "Skips the first N items, across sections, and keeps the rest: offset 20 | limit 10 is the third page of ten, as SQL's LIMIT 10 OFFSET 20. Sections left empty are dropped. Over a database it runs in memory over the rows the database reads, as do the stages after it; the rows it skips are counted, not read.",
        examples: [people + "\nshow people | sort by age | offset 2 | limit 3"])
    case .sample:
      HelpTopic(
        name: "sample", group: .stages,
        syntax: ["PROVIDER | sample N [seed S]", "PROVIDER | sample P% [seed S]"],
        summary:
          "Keeps N items chosen at random (or P percent of them, rounded), every choice of that many equally likely, in their order and sections. With seed S the same items come every time, from any source holding the same rows in the same order (scripts and tests that must repeat); without one each run chooses anew. The draws are dsh's own: DuckDB's or SQLite's sample of the same seed picks other rows. An edit of the source chooses again, as the same sample of the edited rows would. Over a database it runs in memory over the rows read: sample after where, so that the database keeps only the rows the where keeps.",
        examples: [
          people + "\nshow people | sample 3 seed 42",
          people + "\nshow people | sample 50% seed 7 | select name, team",
        ])
    case .extend:
      HelpTopic(
        name: "extend", group: .stages,
        syntax: [
          "PROVIDER | extend NAME = EXPRESSION, …",
          "PROVIDER | extend NAME = WINDOW [by KEY [asc|desc], …] [within section|within EXPRESSION], …",
        ],
        summary:
          "Adds fields computed from each item (or replaces fields of the same name), keeping the rest. Nothing is stored: a field is computed when an item is read. Each expression reads the item as it comes in (not fields the same extend adds). Inside compose, put the child in parentheses to add several fields. A field may depend on the other items too, as SQL's window functions do (DuckDB's definitions, checked against DuckDB): \(WindowFunction.allCases.map { $0.rawValue + "()" }.joined(separator: ", ")), and any aggregate (see aggregates). by orders the items for them (nulls last, equal keys are peers, in their order), within section takes each section apart, within EXPRESSION each value of it (SQL's PARTITION BY: within team), else the whole view. An aggregate with by runs up to the item and its peers (sum(x) by day: a running total); without by it covers every item (x / sum(x) within section: a share). The order is the calculation's only: the items stay where they were (sort by them after). These fields are computed for every item when the stage is built, and again after every edit under it, so live views stay right. Over a sqlite or postgres source, \(["rank", "dense_rank", "row_number", "percent_rank", "cume_dist", "lag", "lead"].map { $0 + "()" }.joined(separator: ", ")) run in the database as its own window functions where they give the same values (keys SQL can say; one call per field, over the whole view, a section or a within key, before any limit or join; on SQLite, lag and lead of a column): the view's order breaks ties, and the stages after it run in SQL too (where r <= 3). The windows are computed once, when the view is first counted: SQLite writes each row's place to a temporary table, and PostgreSQL (whose statements dsh runs read-only) sends each row's key and window values, so a window anywhere in the view is its rows found by rowid or key (a table without a single-column key computes them again for each such page); a view printed whole streams one statement. Aggregates with by and within stay in memory (the databases add reals in another order); describe says (in SQL) and explain shows the statement. random([seed]) gives each item a double from 0 up to 1, drawn once here (read anywhere else it would change at every read; extend r = random(), then where r < 0.1 or sort by r): from the seed and the item's key, else its place, so an item keeps its value through edits and sorts, and a seed draws the same values every run (without one, each run draws anew, and save writes the seed it drew, so its script draws the same). by and within change nothing in it and are refused.",
        examples: [
          "let orders = [{item: \"tea\", price: 2.5, qty: 4}, {item: \"cake\", price: 3.25, qty: 2}]\nshow orders | extend total = price * qty | where total > 8",
          people
            + "\nshow people | section by team | extend r = rank() by age desc within section, share = age / sum(age) within section, gap = age - lag(age) by age within section | select name, age, r, share, gap",
          people + "\nshow people | extend r = random(42) | sort by r | limit 3 | select name, r",
          "let db = sqlite \"samples:people.db\" table people\nshow db | section by team | extend r = rank() by age desc within section | where r == 1 | select name, age, r\ndescribe db | section by team | extend r = rank() by age desc within section | where r == 1",
        ])
    case .select:
      HelpTopic(
        name: "select", group: .stages, syntax: ["PROVIDER | select FIELD, NAME = EXPRESSION, …"],
        summary:
          "Keeps only these fields, in this order: a field by name (a dotted path keeps its last name), or a new one computed from the item. The items' key (key id, a group by's key) is still their key under the name a field that copies it takes (select squad = team, n after group by team), so changes and served pages see moves and reloads; a select that drops it, or an extend that computes it anew, leaves the items told apart whole.",
        examples: [
          people + "\nshow people | select name, initial = substr(name, 1, 1), decade = age / 10 * 10"
        ]
      )
    case .group:
      HelpTopic(
        name: "group", group: .stages,
        syntax: ["PROVIDER | group by EXPRESSION [as NAME], … [with NAME = AGGREGATE, …]"],
        summary:
          "One item per group of items with the same keys: a record of the keys and the aggregates (\(AggregateFunction.namesText); see aggregates), in the order the keys were first seen. A key that is not a field needs a name (year(joined) as year). Keys group as == compares (1 and 1.0 together), and null keys form a group of their own, as SQL's GROUP BY. It is a provider like any other: sort it, section it, put it in a table; an edit of its source groups again. Over a paged source with pages still to load it covers the pages loaded, and a note says so. A key names each group, so a single key is the items' key for diffing. Over a sqlite table (after where stages only) it runs as one GROUP BY in SQLite when SQL computes the same thing: keys and arguments SQL can say, and count, min, max, distinct, and sum and avg of ints (added up in two halves, so exact, or null with a note, as in memory); \(AggregateFunction.names { !SQLiteProvider.answer(for: $0).runsInSQL }), and sums and averages of doubles (whose rounding differs between SQLite versions) run in memory. describe says (in SQL).",
        examples: [
          people
            + "\nshow people | group by team with n = count(), avg_age = avg(age), oldest = max(age) | sort by n desc",
          people + "\nshow people | group by year(joined) as year with names = list(name) | sort by year",
        ])
    case .distinct:
      HelpTopic(
        name: "distinct", group: .stages, syntax: ["PROVIDER | distinct [EXPRESSION [as NAME], …]"],
        summary:
          "Each distinct value once, in the order first seen: the values themselves for one expression (any expression: distinct lower(name), distinct . over plain values), records of the values for several (where a key that is not a field needs as NAME). distinct alone is SQL's SELECT DISTINCT *: each item once, by every field when the fields are known, else by the item itself. Values are distinct as == compares; null is a value of its own. Over a sqlite table it runs in SQL, as group by does.",
        examples: [
          people + "\nshow people | distinct team", people + "\nshow people | distinct team, active",
          people + "\nshow people | select team, active | distinct",
        ])
    case .join:
      HelpTopic(
        name: "join", group: .stages,
        syntax: [
          "PROVIDER | join OTHER on LEFT == RIGHT as NAME [left|inner]",
          "PROVIDER | join OTHER on LEFT == RIGHT as NAME [left|inner] all",
          "PROVIDER | join OTHER on LEFT == RIGHT as NAME full|right",
        ],
        summary:
          "Every item with field NAME holding the item of OTHER whose RIGHT key equals its LEFT key, or null: a lookup, as a view model does. LEFT reads the piped items, RIGHT the items of OTHER (a name, or a source in parentheses; other.field reads as field). Keys compare as == does, and comparing keys of different types is an error; a null key matches nothing. When several items of OTHER share a key the first is taken and a note says how many of the keys looked up did. The match is a record of OTHER's fields: a path into it (NAME.FIELD) is checked and typed against them, as a field is, when OTHER's fields are known (a file's, a table's). inner keeps only the items with a match (left, the default, keeps every item). all makes SQL's joins: an item comes once for each item of OTHER that matches it (left all is SQL's LEFT JOIN, inner all its JOIN), and a note says how many rows that made of how many items; full is SQL's FULL OUTER JOIN: every match, the items without one, and after them the items of OTHER that matched none, with the piped fields null (DuckDB's rows, checked against it); right is SQL's RIGHT OUTER JOIN: every match and the items of OTHER that matched none, the piped items without a match left out, and it runs in memory over any source. Built with a hash of OTHER's keys (O(n + m)); the items are not copied. An edit of either side reaches the joined view and its batch. Two tables of one sqlite file, or of one postgres database, join inside the database when SQL finds the same rows in the same order (keys SQL can say, of one type; OTHER a table in its own order, filtered or not, not sorted or limited; with all or full, OTHER's key a column as stored, which an index can serve, and the piped side in an order of its own, not limited, nor sectioned before full): a lookup stays lazy, a window reading a page of each side; all and full become SQL's joins, ordered by the piped items then OTHER's, read a page at a time, or by one statement when the view is printed whole. describe says (in SQL), and explain shows the statement. Otherwise, and for every other source, it runs in memory. When either side is paged with pages still to load, a note says the join covers the pages loaded.",
        examples: [
          people
            + "\nlet teams = json \"samples:teams.json\" at \"teams\"\nshow people | join teams on team == teams.name as info | select name, team, lead = info.lead, floor = info.floor",
          "let orders = [{id: 1, who: \"ada\"}, {id: 2, who: \"ada\"}, {id: 3, who: \"tim\"}]\nlet staff = [{name: \"ada\"}, {name: \"grace\"}]\nshow staff | join orders on name == orders.who as o full | select name, order = o.id\nshow staff | join orders on name == orders.who as o right | select name, order = o.id",
          "let p = sqlite \"samples:people.db\" table people\nlet t = sqlite \"samples:people.db\" table teams\nshow p | where age > 30 | join t on team == t.name as m all | select name, team, floor = m.floor\ndescribe p | where age > 30 | join t on team == t.name as m all",
        ])
    case .pivot:
      HelpTopic(
        name: "pivot", group: .stages,
        syntax: [
          "pivot PROVIDER on KEY using AGGREGATE [as NAME], … [group by KEY [as NAME], …] [as MODE] [rows …]",
          "PROVIDER | pivot on KEY using AGGREGATE [as NAME], … [group by KEY [as NAME], …]",
        ],
        summary:
          "Each group of the view's items as one item, and each value of KEY as a field holding the aggregate of the group's items with that value, as DuckDB's simplified PIVOT makes them: pivot X on year using sum(population) group by country is a row a country and a field a year. The fields come in the order of the values (nulls aside: an item whose KEY is null makes no field, its group stays); each is named by its value (2000), or by its value and the aggregate's name (2000_total) when there are several aggregates or the one is named (sum(population) as total, or total = sum(population)); an aggregate not named is called by its text. A group without items for a value gets the aggregate of none: count 0, sum null, as SQL's FILTER gives them. Without group by, every field neither KEY nor an aggregate reads is a grouping key. The fields are known once it has run (they are the values found): a field named by a number is written in backquotes (where `2000` > 1000). The aggregates are group by's (see aggregates); it runs in memory over any source, and an edit of its source pivots it again. pivot X on … [as MODE] [rows …] is show X | pivot on …",
        examples: [
          "pivot csv \"samples:penguins-344.csv\" null \"NA\" on island using count() group by species",
          "let penguins = csv \"samples:penguins-344.csv\" null \"NA\"\nshow penguins | pivot on sex using mass = avg(body_mass_g), n = count() group by species | where female_n > 50",
        ])
    case .summarize:
      HelpTopic(
        name: "summarize", group: .stages,
        syntax: ["summarize PROVIDER [as MODE] [rows …]", "PROVIDER | summarize"],
        summary:
          "A record for each field of the view, as DuckDB's SUMMARIZE makes one: column_name, column_type, min and max (its least and greatest values), approx_unique (how many distinct values, nulls aside: counted exactly, where DuckDB estimates), avg and std (the mean and sample standard deviation of its numbers), q25, q50 and q75 (its quartiles, each one of its numbers, as quantile(x, f) gives them: exact, where DuckDB's are estimates), count (the items) and null_percentage (the share of items holding null, to two places). min, max, avg, std and the quartiles are text, as DuckDB's are, so that one column holds a number for one field and a date for the next; a field that is not a number has no average, deviation or quartiles. summarize X is show X | summarize, and takes as and rows as show does; the stage's view is a provider like any other (summarize's fields can be filtered and sorted). The view is read whole; an edit of its source summarizes it again.",
        examples: [
          "summarize json \"samples:cars-150.json\"",
          people + "\nshow people | where age > 30 | summarize | where null_percentage > 0 as csv",
        ])
    case .count:
      HelpTopic(
        name: "count", group: .stages, syntax: ["PROVIDER | count"],
        summary:
          "How many items the view has, as one item: a record {count: N}, 0 for none (SQL's SELECT count(*)). Nothing is read to count: a file's rows are counted as held, a sqlite or postgres view by one COUNT(*) with the stages before it inside it. An edit of its source counts again. Over a paged source with pages still to load it counts the pages loaded.",
        examples: [
          people + "\nshow people | where age > 40 | count",
          "let p = sqlite \"samples:people.db\" table people\nshow p | where team == \"Research\" | count",
        ])
    }
  }
}
