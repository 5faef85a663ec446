import DataSourceKit
import DataSourceKitSQLite
import DataSourceKitValues

/// One `help` topic: how to write it, what it does, and examples that run as tests.
public struct HelpTopic: Sendable {
  public var name: String
  public var group: Group
  public var syntax: [String]
  public var summary: String
  /// Each example is a complete snippet: it runs in a fresh session from the project's folder.
  public var examples: [String]

  public enum Group: String, Sendable, CaseIterable {
    case commands = "Commands"
    case changes = "Changes"
    case providers = "Providers"
    case stages = "Stages"
    case presentation = "Presentation"
    case language = "Language"
  }
}

/// Every help topic.
///
/// docs/LANGUAGE.md carries the same syntax and examples (a test checks it).
public enum HelpCatalogue {
  static let people = "let people = csv \"samples:people.csv\" key id"
  /// The server examples that fetch from the web name; the tests serve it locally.
  public static let exampleServer = "https://api.example.com"
  /// The PostgreSQL server examples name; the tests run them against a throwaway cluster.
  public static let exampleDatabase = "postgresql://dsh@db.example.com/shop"

  public static let topics: [HelpTopic] =
    [
      HelpTopic(
        name: "let", group: .commands, syntax: ["let NAME = EXPRESSION"],
        summary:
          "Binds a name to a provider, a cell, a table or a value. Binding again replaces the name; a failed statement leaves every binding as it was. A name may be any word but a command's, a source's or builder's (csv, table, compose, …) and the language's keywords (with, by, as, and, rows, …); a stage's word (where, sort, count, …) names a binding too, since it means a stage only right after |.",
        examples: [
          people, "let adults = [{name: \"Ada\", age: 36}, {name: \"Tim\", age: 12}] | where age >= 18",
        ]),
      HelpTopic(
        name: "show", group: .commands,
        syntax: [
          "show EXPRESSION [columns FIELD, …] [rows A..B] [as box|plain|markdown|csv|json|html|svg]",
          "show EXPRESSION as swift",
        ],
        summary:
          "Prints a provider as a table of its fields, a table as its cells. columns FIELD, … shows those fields of a provider, in that order (show X | select FIELD, …, for a table too wide to read). as json prints a provider's items as one array (as export writes them, for jq and read_json), and a sectioned view or a table as its sections, each with its header, footer and items. `rows A..B` builds only that window of the flattened view (half-open; a negative bound counts from the end, an open one runs to the edge). On a terminal a long view shows its first and last rows (set maxrows). A few rows (a window, a view ending in limit, the first and last rows at a terminal) of a CSV file over 16 MB, alone or under where, sort by, section by and limit (and a last select of fields, as columns FIELD, … writes it), are found by reading the file a chunk at a time and keeping only those rows, with each section's count: the memory is a chunk's and the rows shown, not the file's (an 857 MB file: 77 MB, against 1.1 GB held whole). So are a table's rows over such a view (show table (csv … | sort by name | limit 20) with cell …), and the rows an export of a view that ends in a limit writes; a table under a header or footer (whose sum reads every row of its section), as html and as svg stream only a view that ends in a limit. The answer is the one the file read whole gives; a file whose column changes type past its first 4 MB (a text among numbers, a marker) is read whole instead. A name bound to the file holds it whole, as a view that is edited must (set stats on says when a show or an export streamed). Not streamed yet: a file with markers (NA among numbers, unless read with null \"NA\"), a compressed file, any other stage (extend, a select that computes), more than 4,096 rows from either end. as html prints one self-contained page that draws the cells as an iPhone table would, and as svg the same picture as one SVG image (see html); as swift prints the Swift program that builds it (see swift).",
        examples: [
          people + "\nshow people rows 0..3", people + "\nshow people rows -2.. as plain",
          "let airports = csv \"samples:airports-new-england.csv\"\nshow airports columns iata, name, state rows 0..3",
          "show table [\"Profile\", \"Settings\"] with cell basic \"{.}\" | header \"Menu\" as json",
        ]),
      HelpTopic(
        name: "browse", group: .commands, syntax: ["browse EXPRESSION"],
        summary:
          "Shows a provider, table, grid, composition or segmented source full screen, as show … as box draws it, a screenful at a time, until you leave with q; then the screen is as it was and the prompt returns. Only the rows on screen are read, so the end of ten million database rows is one window away. A section's header stays at the top while any of its rows is on screen. A cursor marks a row (▸ at its left, and in reverse video where colour is on; a card of a grid, its border heavy) and, in a table of fields, a column (its name in reverse video); the status line says which rows are shown, where the cursor is (rows 1–20 of 1,000 · row 5, age), the section, and whether a source is loading. As in VisiData, keys on the cursor's column open another view over the one shown, each the statement you could type: s sorts by the column (browse people | sort by age; a sectioned view within each section), S largest first (sort by age desc), = keeps the rows with the cursor's value (where team == \"Design\"; a null is where team == null), ! the rows with another value (as SQL's <>, a null is not another value; on a null, the rows with one), and F counts how often each value comes (group by team with count = count() | sort by count desc, team), where Enter opens the rows of the view below with the cursor's value. The new view's statement is its title and the history keeps it (browse …, which ↑ at the prompt brings back); L and a name binds the view shown, as let NAME = its statement typed at the prompt would, so save keeps what a browsing session found. q goes back to the view below, Q to the prompt. A field whose name is not a plain word is written in backquotes. Columns never narrow while the rows scroll: each keeps the widest it has been drawn (a text up to colwidth or the screen), so paging back and forth moves nothing; + and - set the cursor's column's width, a longer text then cut with … (a number is never cut). A key whose rows take longer than 200 ms to read (the middle of a sorted database view, a search through a million rows) says so on the status line, a search with the row it has reached: ^C stops the reads and the screen stays where it was, q stops them and leaves, and the other keys typed meanwhile follow. ^C while browse counts the rows, before the screen opens, or while a view is opened, interrupts it. Keys (? lists them, and what the view has read; space pages through them):\n"
          + BrowseAction.helpLines.map { "  " + $0 }.joined(separator: "\n")
          + "\nOn a terminal only: in a script, a pipe or with TERM=dumb it is an error that points to show … rows A..B.",
        examples: [
          people + " | sort by name | section by team\nbrowse people",
          "let team = csv \"samples:people.csv\" key id | sort by name | section by team\n"
            + "browse table team with cell subtitle \"{name}\" detail \"{email}\" | header \"{section}\" | footer \"{count} people\"",
        ]),
      HelpTopic(
        name: "describe", group: .commands, syntax: ["describe EXPRESSION"],
        summary:
          "Prints the composition tree: adapters, decorators in order (outermost first), presenters and the provider chain, with counts and load states. describe sqlite \"PATH\" lists a database's tables and views, each with its rows and columns (sqlite3's .tables and .schema), and describe postgres \"URL\" a server's (psql's \\dt and \\d: rows counted for tables up to 80 MB, else the planner's estimate); sqlite \"PATH\" or postgres \"URL\" alone anywhere else says which tables there are.",
        examples: [
          people
            + "\ndescribe table people | sort by name with cell basic \"{name}\" | footer \"{count} people\""
        ]),
      HelpTopic(
        name: "explain", group: .commands, syntax: ["explain EXPRESSION", "explain analyze EXPRESSION"],
        summary:
          "Prints the plan of EXPRESSION without running it: the tree describe prints, with the stages that run in memory built and checked but not run (marked not run), then for each database source under it the statement that reads its rows, the values bound to the statement's parameters, and the database's own plan for it (SQLite's EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN without the cost estimates, and over foreign tables the SQL sent to each of their servers): whether an index serves a where, and whether a sort needs a pass of its own. Stages that describe shows above the source run in memory; over a database, a where that stays in memory says why, as the database's dialect declares (in memory, trim: SQL's trim takes off spaces only, …), and so does a join the database does not run (in memory, the two sides read different null markers). A CSV file over 1 MB that the statement starts from is not read: the plan is checked against its header and typed from its first rows, and the source's line says so with an estimate of its rows (not read: 74.3 MB, about 1,040,000 rows; typed from the first 14,065, which a later row may change). So is such a file a join names (join csv \"teams.csv\" on …). Each where, sort by, section by or limit straight over such a file says about how many rows it would give, estimated by running it over those first rows and said with what it stands on (not run; about 786,000 rows: 10,589 of the first 14,065, if the rest are like them), as DuckDB's EXPLAIN gives each step its estimated rows; when none of the first rows is kept it says that, not an estimate (none of the first 14,065 rows, which may be unlike the rest: a file sorted by a column has first rows unlike the rest); a step over another kind of step (a group by, an extend) says not run alone. A type that a later row changes (a column of numbers with a text further on) is found when the file is read, but a comparison with a column the first rows show as text (other than blanks) is refused from them, since no later row changes text; a compressed file is read whole. A database's table is opened (its columns known) and not counted: its line says not counted, with the PostgreSQL planner's estimate of the rows, or the SQLite table's largest rowid (a seek to its end, where a count reads every page); the values of a large SQLite table's columns its SQL compares are not checked against their types either (a pass over each column): the plan says written from the columns as declared, and the run checks them (an extend's arithmetic that goes to PostgreSQL is written as if no operand could overflow, and the plan shows, without running it, the statement that counts such operands first when the statement runs; see postgres). A group by, distinct, sample or window over such a file is built without its rows (its fields are its keys', aggregates' and windows'), and says not run, as do the stages under and over it. A group by or distinct that a database runs is written and not run: explain shows its GROUP BY (over SQLite written from the columns as declared, since their values are checked only when it runs). Other sources are read. A stage that needs its input's rows to be built (a group by or distinct in memory, a join, a sample, window functions) is built without them and says not run when the fields it sees are known without rows (a file's columns, a table's); a join that a database runs is its statement, written and not run (a lookup's two statements per page, the first match of each key and those rows, follow with their plans) (its line says not counted, a stage over it not run, and the notes running it gives, of keys matched more than once and rows made, come with show or explain analyze, as does a check of the other table's values against its columns' types); over a source that knows no fields (a list, JSON whose records vary) it reads them, with the stages under it. An error in any stage is reported before anything runs, as it is for every statement (and a misspelt field over a CSV file before the file is read, through every stage up to a decoration or a join with a compressed or downloaded file or a database, and in a table's cell; so is a field read from distinct's plain values, or a path into a field of the file, which is never a record). explain analyze runs the statement (as PostgreSQL's and DuckDB's EXPLAIN ANALYZE do) and adds each step as it ran: its time and the rows it gave (an extend or select computed in memory as rows are read is a step too, its time its input's loading; so are each table's source, its cells and each header, footer or placeholder, their rows shown as cells, in a composition too). A view of a large CSV file that ends in a limit runs as show runs it, the file streamed a chunk at a time: one step.",
        examples: [
          "explain sqlite \"samples:people.db\" table people | where id < 4 | sort by name",
          "explain analyze csv \"samples:people.csv\" | where age > 30 | sort by name | limit 3",
          "explain sqlite \"samples:people.db\" table people | where trim(name) == \"Ada Lovelace\" and age > 30",
        ]),
      HelpTopic(
        name: "vars", group: .commands, syntax: ["vars"],
        summary: "Lists every binding with its one-line summary.",
        examples: [people + "\nvars"]),
      HelpTopic(
        name: "set", group: .commands,
        syntax: ["set"] + SettingName.allCases.map(\.syntax),
        summary:
          "Shows or changes a setting. width: columns for box and plain output (the terminal's, else COLUMNS, else 80); a table of fields wider than that narrows its texts (and the names above numbers) first, never cutting a number, a date, a time or a boolean; one whose texts would be cut below 8 characters, or whose values do not fit whole, shows instead its first and last columns that fit around a … column and says how many it left out, as DuckDB's box mode does (show X columns a, b picks the columns; browse scrolls sideways). maxwidth: the same as width, under DuckDB's name. colwidth: the widest a column of text is drawn in a table of fields (longer texts end in …; numbers, dates and times are never cut), so that more columns fit. maxrows: rows a terminal shows of a long view, 0 for all (batch output is never cut). color: auto is on for a terminal unless NO_COLOR is set. timer: prints each statement's run time. stats: prints what each show did (see stats). echo: prints each statement of a script before its output, after the prompt (dsh --echo sets it), so a script's output reads as a session. appearance: light or dark mode for pictures (as html, as svg). device: the screen pictures are drawn for: iPhoneSE (375 points wide), iPhone15 (393, the default) or iPad (820); a name may be quoted with spaces, as \"iPhone SE\".",
        examples: [
          "set mode markdown\nset width 100\nset", "set maxrows 0", "set echo on\nshow [1, 2] as plain",
          "set maxwidth 60\nshow csv \"samples:airports-new-england.csv\" rows 0..2",
          "set appearance dark\nset device \"iPhone SE\"",
        ]),
      HelpTopic(
        name: "source", group: .commands, syntax: ["source \"PATH\""],
        summary:
          "Runs the statements of a script file in this session; its errors name the file and line. Paths inside a script (csv, json, sqlite, source, save) resolve against the script's own folder; paths typed at the prompt, in -c or on standard input against the working directory.",
        examples: ["source \"samples:menu.dsh\""]),
      HelpTopic(
        name: "help", group: .commands, syntax: ["help", "help TOPIC"],
        summary: "Lists the topics, or shows one with its syntax and examples.", examples: ["help show"]),
      HelpTopic(
        name: "quit", group: .commands, syntax: ["quit", "exit"],
        summary: "Leaves the shell (^D does too). In a script, the statements after it do not run.",
        examples: ["show [1, 2] as plain\nquit\nshow [3] as plain"]),
      HelpTopic(
        name: "more", group: .commands, syntax: ["more NAME", "TABLE | more"],
        summary:
          "more NAME loads the next page of the paged provider NAME shows, and prints the rows it inserted as the batch a table view gets. As a decorator, | more adds a Load more… footer under the last section while pages remain.",
        examples: [
          "let feed = paged range 0..5 size 2\nlet t = table feed with cell basic \"{.}\" | more\nshow t as plain\nmore t\nmore t\nshow t as plain"
        ]),
      HelpTopic(
        name: "switch", group: .commands, syntax: ["switch SEGMENTED to NAME"],
        summary:
          "Shows another segment of a segmented source, and prints the batch a table view gets for it: every section of the old segment deleted, every section of the new one inserted, checked as UIKit would check it.",
        examples: [
          "let tabs = segmented digits: (table [1, 2] with cell basic \"{.}\"), letters: (table [\"a\"] with cell basic \"{.}\")\nswitch tabs to letters\nshow tabs"
        ]),
      HelpTopic(
        name: "reload", group: .commands, syntax: ["reload EXPRESSION"],
        summary:
          "Loads every provider below a provider or table again (after its file changed). A load that fails leaves the provider in the error state with no items, which a placeholder can show; the failure is reported. Stages a database runs (where, sort by … over sqlite or postgres) make a provider of their own, not one above the source: reload the view or its table (reload v).",
        examples: [people + "\nreload people"]),
      HelpTopic(
        name: "stats", group: .commands, syntax: ["stats [NAME]", "set stats on|off"],
        summary:
          "What the last show of a name (or the last show) did: sections and rows counted, cells built (by reuse identifier) and cells reused; with set stats on, a show or an export that streamed a file says so (the file read in 215 chunks, 20 rows kept), and one that began to and went back to reading it whole says why (score holds \"n/a\" among its values past row 1,312,048). A name keeps its view between shows, so a second show reuses the cells of the first.",
        examples: [
          "let big = table range 0..1000000 with cell basic \"{.}\"\nshow big rows 1000..1020 as csv\nstats big"
        ]),
      HelpTopic(
        name: "save", group: .commands, syntax: ["save \"PATH\" [with exports]"],
        summary:
          "Writes a script that rebuilds every current binding as it is now: every setting changed since dsh started (from its default, or from what a flag such as --echo gave the run), then only the definitions the bindings need and the changes made to them since (insert, delete, update, move, switch, more), in the order they first ran; with exports, also every export that ran, after what it read. File paths are written relative to the saved script, and a script's paths resolve against its own folder, so it replays from anywhere. Running it in a fresh dsh gives the same show output for every binding. The file is written whole or not at all (beside the target, flushed to disk, then renamed over it); a link is followed and its target written, an existing file keeps its permissions and owner, and anything but a regular file or a new path (a folder, a device, a pipe) is refused.",
        examples: [people + "\nsave \"/tmp/dsh-saved-example.dsh\""]),
      HelpTopic(
        name: "export", group: .commands,
        syntax: ["export EXPRESSION to \"PATH\" [as csv|json|jsonl|markdown|html|svg|parquet|swift]"],
        summary:
          "Writes a provider's or table's data to a file: csv and markdown as show prints them (every row, every column), json the items as an array (what json, DuckDB's read_json and pandas read back as the same table; a sectioned view or a table keeps the sections as show … as json prints them), jsonl one item per line (in csv a null is an empty field and empty text is written \"\", so the file reads back with the same values), parquet the fields as typed columns, which DuckDB, pyarrow and pandas read back with the same values and types (an int is INT64, a double DOUBLE, text STRING, a bool BOOLEAN, a date DATE, a timestamp TIMESTAMP in microseconds, UTC; every column may be null; ints beside doubles are doubles, exact to 2^53; a column of nulls alone takes the type the source knows for it; the section's key is a first column when the view has several sections, as in csv; row groups of 131,072 rows, each column's minimum, maximum and nulls in its statistics; text of few distinct values as a dictionary and each value's number in it; Snappy-compressed where the machine has libsnappy); a field holding lists, records or values of two types is refused with its name, before the file is touched (extend x = text(x) makes it text); the format comes from the extension (.csv .json .jsonl .ndjson .md .html .svg .parquet .swift) when as is left out; html and svg write the page and the picture show … as html and as svg print (see html), swift the program show … as swift prints (see swift). The file is written whole or not at all (beside the target, flushed, then renamed over it), never over a folder; a source that fails while it is read writes nothing. A view of a large CSV file that ends in a limit (csv \"big.csv\" | where … | sort by … | limit 20) is read as show reads it: the file streamed a chunk at a time, keeping the rows written (see show). The target (its folder, what is there, its format) is checked before anything is read. Refused under --safe. A path in a script is relative to the script's folder. save leaves exports out (it rebuilds bindings, not commands) unless asked: save \"PATH\" with exports replays the exports that ran.",
        examples: [
          people + "\nexport people | where age > 40 to \"/tmp/dsh-export-example.csv\"",
          people
            + "\nexport people to \"/tmp/dsh-export-example.parquet\"\nshow parquet \"/tmp/dsh-export-example.parquet\" | where age > 40",
        ]),
      HelpTopic(
        name: "insert", group: .changes, syntax: ["insert into PROVIDER VALUE [at N]"],
        summary:
          "Adds an item to a list, csv, json or range provider (at the end, or at position N). A record's fields must be the provider's; missing ones are null. Everything derived from the provider, and every view on it, sees the change.",
        examples: [
          people
            + "\ninsert into people {id: 11, name: \"Barbara Liskov\", team: \"Research\"} at 0\nshow people rows 0..2"
        ]),
      HelpTopic(
        name: "delete", group: .changes,
        syntax: ["delete from PROVIDER where EXPRESSION", "delete from PROVIDER at N"],
        summary: "Removes the items that meet the predicate, or the item at position N.",
        examples: [people + "\ndelete from people where team == null\ndelete from people at 0"]),
      HelpTopic(
        name: "update", group: .changes,
        syntax: ["update PROVIDER set FIELD = EXPRESSION, … [where EXPRESSION]"],
        summary:
          "Sets fields of the records that meet the test (all records without one), each computed from the record as it was (as SQL's UPDATE). A value must fit the field's type (an int goes into a double field).",
        examples: [
          people + "\nupdate people set active = true, team = \"Research\" where id == 7",
          people + "\nupdate people set age = age + 1, name = upper(name) where team == \"Design\"",
        ]),
      HelpTopic(
        name: "move", group: .changes, syntax: ["move PROVIDER from N to M"],
        summary: "Moves the item at position N to position M, in a provider whose order is its own.",
        examples: ["let steps = [\"a\", \"b\", \"c\"]\nmove steps from 2 to 0\nshow steps as csv"]),
      HelpTopic(
        name: "changes", group: .changes, syntax: ["changes NAME [as json]"],
        summary:
          "The batch updates a table view would get for NAME since it was last shown (or its changes asked): section deletes, inserts and moves, row deletes, inserts, moves (also across sections) and reloads, in UIKit's index spaces (deletes and reloads in old indexes, inserts in new, moves old → new). Items are identified by their provider's key field, else their whole value; in a view of an edited table (and of its where, sort by, section by and limit stages, and of extend and select over it) an item is the same item however it is edited, and the batch is worked out from the items the edits touched, so one edit of a million-row view costs about what it touches; a moved row whose content changed is moved, then reloaded after the batch by its new index path (UIKit refuses to reload a moved row in the batch: `reconfigureRows(at:)` or a second batch does it; JSON `reloadedAfterMoves`), and a moved section with row changes is replaced. Headers and footers whose text changed (a {count}, a Load more footer that goes) are listed too, in the new index space, because UIKit does not refresh them on its own. Every batch is checked as UIKit would check it.",
        examples: [
          people
            + "\nlet t = table people | section by team with cell basic \"{name}\"\nshow t as csv\nupdate people set team = \"Design\" where id == 1\nchanges t\ninsert into people {id: 12, name: \"Anita Borg\", team: \"Design\"}\nchanges t as json"
        ]),
      HelpTopic(
        name: "check", group: .changes,
        syntax: ["check \"PATH\" before [COUNTS] after [COUNTS]", "check \"PATH\" against NAME"],
        summary:
          "Reads a batch of updates from a file (the JSON that changes NAME as json prints, or the text changes prints) and says whether UIKit's performBatchUpdates accepts it, given the rows of each section before and after the model changed ([36, 4]: two sections); against NAME takes them from a view: what it showed when last shown (or its changes asked) and what it shows now. When UIKit refuses the batch it prints the reason UIKit's NSInternalInconsistencyException gives, with its numbers (rows after, rows before, inserted, deleted, moved in, moved out; word for word for the counts and a deleted row past the end), the operation at fault, and a batch UIKit accepts: duplicates dropped, a moved row's reload done after the moves, a section whose rows do not add up replaced whole (what reloadSections does); the statement then fails, so a script exits 1. The library's BatchUpdate.validate throws the same reason (uikitReason), so an app can log it before UIKit crashes.",
        examples: [
          "check \"samples:crash-batch.json\" before [3, 2] after [4, 2]",
          people
            + "\nlet t = table people | section by team with cell basic \"{name}\"\nshow t rows 0..1\ninsert into people {id: 12, name: \"Anita Borg\", team: \"Design\"}\ncheck \"samples:crash-batch.json\" against t",
        ]),
      HelpTopic(
        name: "watch", group: .changes, syntax: ["watch NAME", "unwatch NAME"],
        summary:
          "Prints NAME's batch updates after every statement that changes it (an edit, a reload, a switch), until unwatch. A switch or more of NAME itself prints its batch once, and changes NAME starts after it.",
        examples: [
          people
            + "\nlet t = table people with cell basic \"{name}\"\nwatch t\ndelete from people where age < 30\nunwatch t"
        ]),
      HelpTopic(
        name: "serve", group: .changes,
        syntax: ["serve NAME [on PORT | on \"HOST:PORT\"]", "serve NAME off", "serve off"],
        summary:
          "Serves a live preview of the table NAME to a browser and returns to the prompt: open the address it prints, which carries a token (?token=…) made anew for each serve, as Jupyter's does: only who sees that address reads the view (another user of this machine, or a page of another site, gets 403), a request must name the host by an address or as localhost (a name that resolves here, as DNS rebinding makes one, gets 421), and a page of another site may not open its socket. The page is what show NAME as html draws, as a table view draws it: a table of up to 1,000 rows whole, a longer one as a list as tall as its rows (at most 8 million pixels, well within what browsers lay out) of which the page draws only the rows in view, asking dsh for them as it scrolls, so a table of a million rows opens, edits and scrolls at the cost of the rows on the screen. Every statement that changes NAME updates it in place, as performBatchUpdates would, at the cost of the change (the batch, then the rows in view around the row at the top of the screen, which stays where it was): rows and sections are deleted, inserted, moved and reloaded with a short animation (new rows fade in, deleted ones out, moved ones slide, reloaded ones flash), the scroll position kept; headers, footers and placeholders follow. A setting (appearance, device, style) or a new let NAME redraws the page without reloading it. Several pages may be open at once. Routes: GET / the page, its first rows drawn; GET /window?from=A&to=B (or ?section=S&row=R&before=B&after=A, and &counts=1 for each section's rows) the rows of a window as JSON, the parts of the page that hold them, at most 5,000 rows; GET /view.json what show NAME as json prints now; GET /state the number of the state now; a WebSocket at /live with one message per change, exactly what changes NAME as json prints (a {\"kind\": \"layout\"} message when the page must be drawn whole). dsh draws what a page asks for when it is idle (at the prompt, or waiting for input): while a statement runs the page waits for it, up to a minute (then 503, and the page asks again). When serving stops the page says so at its top and keeps its last state; it does not follow what later listens on the port. A request's line and headers may take 16 KB and 30 s, nothing a page sends on its socket is read, at most 256 connections are open at once, and new ones wait while the process is short of files. Serving counts as showing NAME for changes NAME; a let that makes NAME something without a page stops serving it. It listens on 127.0.0.1 only, port 8000 unless given (0: any free port); \"0.0.0.0:PORT\" reaches other machines, with a warning, and --safe refuses it. A port in use is an error naming it. serve NAME off or serve off stops it, and so does leaving dsh; a script, -c or piped input keeps serving after its last statement until ^C or SIGTERM, as python -m http.server does, and says so on standard error.",
        examples: [
          people
            + "\nlet t = table people | sort by name with cell basic \"{name}\" | header \"People ({count})\"\nserve t on 0\ninsert into people {id: 12, name: \"Anita Borg\"}\nserve off"
        ]),
      HelpTopic(
        name: "csv", group: .providers,
        syntax: [
          "csv \"PATH\" [key FIELD] [delimiter \"C\"] [header false] [skip N] [null \"TEXT\", …] [types {FIELD: TYPE, …}]",
          "csv \"https://…\" … [timeout SECONDS] [maxsize MB] [redirects any]",
          "csv \"FILE.csv.gz\" [maxsize MB]  csv \"FILE.csv.bz2\" …  csv \"FILE.csv.zst\" …  csv \"FILE.zip\" [member \"NAME\"]",
        ],
        summary:
          "Rows of a CSV file (RFC 4180: quoted fields with delimiters, quotes and line breaks; LF, CRLF or lone CR line ends; a UTF-8 BOM) with a header row; header false reads the first row as data and names the columns column0, column1, … (as DuckDB names them, padded to the last one's digits: column00 … column10), and skip N passes over the first N lines, whatever they hold (a title, a notice), before the header. csv \"-\" reads what is piped into dsh (cat f.csv | dsh -c 'show csv \"-\"'), read to its end when first named and kept for the run, so every source naming it reads the same rows; where standard input holds the statements (dsh < script.dsh) or is the terminal, it is refused. Each column's type is inferred from all its values: int, double (NaN, Infinity, inf and -inf in any case are doubles, as DuckDB reads them; NaN sorts after every number and equals itself), bool, date (YYYY-MM-DD, or YYYY/MM/DD as DuckDB reads it; a column holds dates written one way), timestamp (ISO 8601 with a time) or text; a column of dates written day or month first (31/01/2012, 01/31/2012) is text, and a note gives the types line that reads it; an empty field is null, a quoted empty one (\"\") empty text. Integers stay exact: `02134` or a number beyond 64 bits makes its column text. A column of numbers but for a few markers (NA) is text, and the load says so with a note; null and types (see 'help types') read it as you mean it. Text after a closing quote (`\"x\"y`) is an error naming the line. The delimiter is one ASCII character other than a line end or a quote; when none is given it is a comma, unless the header holds no comma but a ;, a tab or a | that each of the next rows (up to 20) holds as often, outside quotes: then that one, as DuckDB's sniffer finds it. `key` names the field that identifies a row. A URL (http:// or https://) is fetched whole when bound, under http's limits (timeout, 60 s unless given; maxsize, 100 MB; redirects within the host), ^C stops it and --safe refuses it; reload reads the fetched copy, and binding again fetches again. A gzip file (one member or several, as cat a.gz b.gz makes), a bzip2 file (one stream or several, as pbzip2 makes), a zstd file (one frame or several; read through the system's libzstd) or a zip archive (stored or deflated; its one file, or member \"NAME\" by its path or file name) is read as the file it holds, told by its first bytes rather than its name, inflated a chunk at a time into a file of its own, never whole in memory; it may inflate to 2 GiB, or maxsize MB, and a file past that (a compression bomb) stops there with an error.",
        examples: [
          people, "let semi = csv \"samples:scores.csv\" delimiter \";\"\nshow semi",
          "show csv \"samples:people.csv\" skip 1 header false | limit 3",
          "let stocks = csv \"samples:stocks.csv.gz\"\nshow stocks | group by symbol with months = count(), top = max(price)",
          "let weather = csv \"samples:weather.zip\" member \"seattle-weather-2012.csv\"\nshow weather | group by weather with days = count(), rain = sum(precipitation)",
          "show csv \"samples:states.csv.bz2\" | limit 3",
          "show csv \"samples:airports-new-england.csv.zst\" | group by state with airports = count() | sort by airports desc",
          "let penguins = csv \"samples:penguins.csv\" null \"NA\"\nshow penguins | where body_mass_g > 6000",
          "show csv \"\(exampleServer)/data/people.csv\" | where age > 45",
        ]),
      HelpTopic(
        name: "json", group: .providers,
        syntax: [
          "json \"PATH\" [at \"A.B\"] [key FIELD] [null \"TEXT\", …] [types {FIELD: TYPE, …}]",
          "json \"https://…\" … [timeout SECONDS] [maxsize MB] [redirects any]",
          "json \"FILE.json.gz\" …  json \"FILE.json.bz2\" …  json \"FILE.json.zst\" …  json \"FILE.zip\" [member \"NAME\"] …",
        ],
        summary:
          "Items of a JSON file: an array of records or values, JSON Lines, or the array found at a dotted path inside the document. Record fields keep their order. A field whose every string is an ISO date (2019-03-01) is a date, and one whose every string is an ISO timestamp written one way (T or a space, a fraction or none, Z, an offset or none) is a timestamp, as DuckDB's read_json types them: a date column dsh writes as JSON reads back as dates. json \"-\" reads what is piped into dsh, as csv \"-\" does. A URL is fetched whole when bound, as csv fetches one (http reads JSON from an API page by page), and a gzip, bzip2 or zstd file or a zip archive is read as the file it holds, as csv reads one.",
        examples: ["let teams = json \"samples:teams.json\" at \"teams\" key name\nshow teams"]),
      HelpTopic(
        name: "parquet", group: .providers,
        syntax: [
          "parquet \"PATH\" [key FIELD]",
          "parquet \"https://…\" … [timeout SECONDS] [maxsize MB] [redirects any]",
        ],
        summary:
          "Rows of a Parquet file, the format public data now ships in (pyarrow, pandas, Spark and DuckDB write it), read as it is asked for, as DuckDB reads one: binding reads the file's footer alone (its columns, their types and, from its statistics, their nulls), a row shown reads its row group, and a stage over every row reads the columns it uses, their row groups a core each; what is read is kept. A group by reads a row group's columns at a time and lets them go, each row group grouped on a core of its own when its keys and arguments are fields and its aggregates count, sum or average ints, or take the least, greatest, first or last (the groups merged in the file's order), so ten million rows are grouped in about a twentieth of a second and the memory of a few row groups; a where written just before the group by is tested as each row group is read, and the row groups its statistics rule out are not read. Flat schemas: every physical type and the common logical ones, as DuckDB's read_parquet reads them with dsh's types: ints of every width (an unsigned 64-bit column with a value past an int's range as doubles, rounded past 2^53), float as the double of the decimal it prints as (43.22, not 43.220001220703125, as DuckDB and pandas show it), double as it is, decimals as the double their digits spell, dates, timestamps of every unit and INT96 as timestamps (in UTC, to the microsecond, nanoseconds rounded down), times as text (12:34:56.789), UUIDs as their text, strings, JSON and enums as text, and other byte arrays as text with each byte that is not printable ASCII (and a backslash or a quote) written \\xNN, as DuckDB prints a BLOB; nulls where the file has them. Pages of either version, in the PLAIN, dictionary, RLE, DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT encodings, uncompressed or compressed by Snappy (the system's libsnappy, which Scripts/setup.sh installs), gzip or zstd, in any number of row groups. A nested column (a list, a map or a struct) is left out, with a note naming it (a file of nested columns alone is refused); LZ4 and Brotli are refused, and so are a file of more than 100,000,000 rows, and damaged bytes: found when the part holding them is read, so the first rows of a file damaged further on still show, and a view that reads the damaged part fails with the error. The file is kept open while bound, and what was read of it is kept: written over in place, the next read of a part not read before says it changed (bind it again to read the new one); rows and columns already read are shown as they were read. A URL is fetched whole when bound, as csv fetches one. dsh FILE.parquet binds the file under its name and shows it. A where over the file tests only the row groups whose statistics leave it possible, as DuckDB's reader skips them: each condition joined by and that compares a field with a value (id < 100, name == \"Ada\", day >= date(\"2020-01-01\"), x == null, x != null), for ints, doubles, text (by code point), dates and timestamps; a group whose bounds rule the condition out is not read (explain analyze says how many were read). Only what the statistics say for certain counts: a double's maximum leaves out its NaNs, which sort above every number in dsh, so x > 5 reads every group; floats, decimals, unsigned ints and a table that was edited read every row. A stage after the where reads its columns whole. export … to \"x.parquet\" writes a file (see export).",
        examples: [
          "let penguins = parquet \"samples:penguins.parquet\"\nshow penguins | group by species with n = count(), mass = avg(body_mass_g) | sort by mass desc"
        ]),
      HelpTopic(
        name: "postgres", group: .providers,
        syntax: [
          "postgres \"postgresql://USER[:PASSWORD]@HOST[:PORT]/DB\" table NAME [key FIELD] [null \"TEXT\", …] [types {FIELD: TYPE, …}] [timeout SECONDS]",
          "postgres URL query \"SELECT …\" [key FIELD] …",
          "describe postgres URL",
        ],
        summary:
          "Rows of a table or query on a PostgreSQL server, read lazily: a table is counted when first asked (let t = … table big, then show t | where …, counts only what the stages keep), a query when bound (sections by one GROUP BY), and rows are read 256 at a time around the rows a view shows, or by one streamed statement when a view is printed or exported whole; rows in the order of a unique key are read on from the last key of the page before, and a table whose int key has no gaps reads a range of keys. where, sort by, section by, limit, group by (median and quantiles too), distinct, a join with a table of the same database, window functions in an extend (see extend) and an extend whose every field SQL says (extend ppc = price / carat, then a sort by ppc and a limit: one statement) run on the server where SQL gives exactly dsh's answer (text by code points, ints against doubles exactly, null markers as nulls, nulls last; like, starts with and ends with against a written pattern as LIKE in a UTF-8 database); the rest runs in memory, and describe shows the SQL. Of a where whose conditions joined by and SQL says only some, those run on the server and the rest in memory over its rows. The server stops a statement at an int that overflows, a double past its range and a division by zero, where dsh gives null with a note or IEEE's answer: so an extend's arithmetic goes down only after one statement has counted the rows whose operands lie outside the ranges where no operation can overflow or underflow (none may) and the rows that divide by zero (the note's; the server is given null for them). Every statement runs alone in a transaction begun READ ONLY and rolled back, with its values bound as parameters: a query that writes fails with the server's own message, nothing a statement does (a setting, a function that writes) outlives it, and edits are refused. A few functions act outside any transaction, so a rollback cannot undo them: a query that names one (advisory locks, pg_terminate_backend, pg_cancel_backend, dblink, lo_export and the other lo_ functions, pg_create_…_replication_slot, pg_reload_conf) is refused before it runs, and after every statement dsh lets go of any advisory lock a function took. What read-only cannot promise: a view or function that calls such a function inside its body, or a superuser's functions writing files and reaching other servers; connect as a role that may only read (GRANT SELECT, or pg_read_all_data), and dsh warns once when the role is a superuser. The server's notices (RAISE NOTICE) are shown as notes, every control character escaped. Rows are ordered by the key, else the table's primary key, else its physical order; a query keeps its own ORDER BY. A partitioned table without a key is ordered by partition, then place, and so is one whose partitions are postgres_fdw foreign tables on other servers (sharding as stock PostgreSQL does it): its answers are a plain table's, and explain shows beside each foreign scan the SQL the coordinator sends to that shard (Remote SQL). A sharded table whose rows have no place of their own across shards (a Citus distributed table, where ctid is unique only within a shard) needs key FIELD naming a unique column, or a primary key: dsh does not tell such a table from a plain one. Types come from the server's (integer int; numeric, real and double precision double; text; boolean bool; date; timestamp and timestamptz timestamp, in UTC; json and jsonb a record), types {…} overrides them; numeric is read as the double its text spells (rounded past 15–17 digits). A value no dsh value holds is an error that names it and says to read the column as text (types {d: text}): a date or timestamp outside years 1 to 9999 (infinity, -infinity, BC dates), a numeric beyond a double (10^400). A null marker matches a column's whole text exactly (in a CSV the spaces around a field are padding; in a database they are the value). With key FIELD rows are in the key's order, and equal keys in the table's own order. The connection goes through libpq, as psql's does, and takes what psql takes: a URL (postgresql://USER@HOST:PORT/DB?sslmode=require) or key=value words (\"host=db.internal dbname=shop\"); what it leaves out comes from the PG* variables (PGHOST, PGPORT, PGUSER, PGDATABASE, PGSSLMODE, PGSERVICE, …), a service=NAME from the service file, and the password from PGPASSWORD or ~/.pgpass (or passfile=PATH). A host that is a folder is a Unix socket's. sslmode is libpq's (prefer unless given; require encrypts, verify-ca also checks that a trusted authority signed the server's certificate, verify-full that it names the host; sslrootcert=PATH names the authority, else ~/.postgresql/root.crt, else the system's). ^C cancels a running query on the server (libpq's cancel request); timeout sets the server's statement_timeout. Errors name the server and give the server's message, and a query's SQL. A password never shows: messages, describe, the lines an error quotes, --echo, the history, save and show … as swift leave it out (a saved script connects with PGPASSWORD or ~/.pgpass). A dsh that is killed mid-query leaves none running: the server checks for it every second.",
        examples: [
          "let db = postgres \"\(exampleDatabase)\" table people key id\nshow db | where age > 40 | sort by name\ndescribe db | where age > 40 | section by team",
          "show postgres \"\(exampleDatabase)\" query \"SELECT team, count(*) AS n FROM people GROUP BY team ORDER BY team\"",
          "describe postgres \"\(exampleDatabase)\"",
        ]),
      HelpTopic(
        name: "sqlite", group: .providers,
        syntax: [
          "sqlite \"PATH\" table NAME [key FIELD] [null \"TEXT\", …] [types {FIELD: TYPE, …}]",
          "sqlite \"PATH\" query \"SELECT …\" [key FIELD]",
          "describe sqlite \"PATH\"",
        ],
        summary:
          "Rows of a SQLite table or query, like a fetched results controller: opened read-only, counted when a view first asks (let v = … | section by cat costs nothing until v is shown), and only the rows a view shows are read (a page around the window; the last rows of a sorted view read from its end, a few rows of a sectioned one found by their section's key). where, sort by, section by (a GROUP BY counts the sections) and limit run in SQL where they can; a stage SQL cannot say (a nested field, a list comparison, anything after a limit) runs in memory over the rows, and so do the conditions of a where (joined by and) SQL cannot say, after those it can (and the sorts after them). like, starts with and ends with against a written pattern run as GLOB (SQLite's LIKE ignores case; a text holding a NUL byte, which GLOB reads only up to, by dsh's own matcher), served by an index when the pattern starts with text; ilike and matches run in memory. A text whose bytes are not UTF-8 shows a U+FFFD for each run of them, and SQL compares it by its bytes: a condition on such a text can keep other rows in SQL than over the same values in memory. A UTF-16 database keeps its text columns out of SQL (SQLite orders UTF-16 text by its bytes). SQL errors show SQLite's message and the SQL. Each column has one type: the declared one (INTEGER int, REAL or NUMERIC double, TEXT text, BOOLEAN bool, DATE date, DATETIME or TIMESTAMP timestamp), else the type of the values it holds; a value that does not fit is an error, so SQL compares as dsh does. Tables of up to 100,000 rows are checked when opened; larger ones when a stage run in SQL compares a column (a pass over it, or two seeks of its index) and as rows are read, so a window of a large table costs the window; describe checks them all and counts the nulls. Expressions go down to SQL only where SQLite computes the same value; window functions in an extend (rank() by score desc within section, lag(x) by day) are SQLite's own where they give dsh's values (see extend), and so is an extend whose every field SQL says (arithmetic of doubles, the functions SQLite answers for: extend s2 = score * 2 | sort by s2 desc | limit 5 is one statement); describe shows what ran in SQL.",
        examples: [
          "let db = sqlite \"samples:people.db\" table people key id\nshow db | where age > 40 | section by team | sort by name\ndescribe db | where age > 40 | limit 2",
          "show sqlite \"samples:people.db\" query \"SELECT team, COUNT(*) AS n FROM people GROUP BY team\" as csv",
          "describe sqlite \"samples:people.db\"",
        ]),
      HelpTopic(
        name: "http", group: .providers,
        syntax: [
          "http \"URL\" [at \"A.B\"] [key FIELD] [timeout SECONDS] [maxsize MB] [redirects any] [null \"TEXT\", …] [types {FIELD: TYPE, …}]"
        ],
        summary:
          "JSON from the web: an array of items, or the array at a dotted path. A failed request (an HTTP error, a timeout, invalid JSON) is an error naming the URL and the status or the line. A server cannot stretch a request: timeout (10 s by default) bounds the whole request, maxsize (100 MB by default) the bytes taken, and redirects are followed within the URL's host and port only (another port is another server) unless you write redirects any; describe shows where the answer came from. Put {page} (from 1) or {offset} (from 0) in the URL and page it with paged … size N to fetch a page at a time.",
        examples: [
          "let items = http \"https://api.example.com/items?size=3&total=3\" key id timeout 5\nshow items as plain"
        ]),
      HelpTopic(
        name: "paged", group: .providers, syntax: ["paged SOURCE size N"],
        summary:
          "Shows a provider's items N at a time: the first page when loaded, the next with more. An http source whose URL has {page} or {offset} fetches each page; the end comes with an empty or short page.",
        examples: ["let feed = paged range 0..250 size 100\nfeed\nmore feed"]),
      HelpTopic(
        name: "array", group: .providers, syntax: ["[VALUE, …] [key FIELD]", "array [VALUE, …] [key FIELD]"],
        summary: "Items written in place: a list of values or records.",
        examples: [
          "show [1, 2, 3]", "let menu = array [{title: \"Profile\"}, {title: \"Settings\"}] key title",
        ]),
      HelpTopic(
        name: "range", group: .providers, syntax: ["range A..B"],
        summary: "The integers from A up to, not including, B; computed on demand, never stored.",
        examples: ["show range 1..1000000 rows 0..3"]),
    ] + StageKind.allCases.map(stageTopic) + [
      HelpTopic(
        name: "aggregates", group: .language,
        syntax: AggregateFunction.allCases.map(\.signature),
        summary:
          "Values of many items. In a header's or footer's template they cover the section's items, in a title's or caption's the whole view, with formats as any hole: footer \"{count} days, {sum(precipitation):.1f} mm\". In group by … with NAME = AGGREGATE they cover each group. Nulls follow SQL: \(AggregateFunction.names(where: \.skipsNulls)) skip them (count(x) counts the values that are not null; count() counts items); \(AggregateFunction.names { $0.isNullWhenEmpty && $0.skipsNulls }) of no values are null; \(AggregateFunction.names { !$0.skipsNulls }) take values as they are. Ints are summed exactly; doubles with the rounding error of each addition carried along (Neumaier's sum, as SQLite 3.43 sums), so a total of prices is the exact total to within its last digit, whatever the order of the items. median and quantile_cont are DuckDB's (quantile_cont(x, f): the value at (n − 1)·f in order, between the nearest two); quantile(x, f) is DuckDB's quantile_disc, one of the values itself; the fraction is a number from 0 to 1, written out. In a group by over a postgres source they run on the server, taken from the values sorted into an array by dsh's own arithmetic (its percentile_cont and percentile_disc round otherwise in the last bit). An int sum beyond 64 bits, or a value an aggregate cannot take, is null with a note. Totals follow edits: a footer whose total changes is in the batch's reloaded footers. An aggregate cannot go in a cell or a where (one item each) or span the tables of a compose; in extend it covers the other items, as a window (share = x / sum(x) within section, total = sum(x) by day running; see extend).",
        examples: [
          people
            + "\nshow table people | section by team with cell basic \"{name}\" | footer \"{count} people, average age {avg(age):.1f}\" | title \"{count} people, {distinct(team)} teams\"",
          people
            + "\nshow people | group by team with median = median(age), p90 = quantile(age, 0.9), q1 = quantile_cont(age, 0.25)",
        ]),
      HelpTopic(
        name: "cell", group: .presentation,
        syntax: [
          "cell basic|subtitle|value1|value2 \"TEMPLATE\" [detail \"TEMPLATE\"] [accessory disclosure|checkmark|detail|detail disclosure|none]"
        ],
        summary:
          "A presenter: how an item becomes a cell, after UIKit's cell styles. basic: one line; subtitle: the detail on a second line; value1: the detail right-aligned; value2: the text as a narrow right-aligned label (as Contacts' \"mobile\"), the detail after it. Accessories after UIKit's: disclosure ›, checkmark ✓, detail ⓘ (the info button), detail disclosure ⓘ›.",
        examples: [
          "let row = cell subtitle \"{name}\" detail \"{email}\" accessory disclosure",
          people + "\nshow table people | limit 3 with cell value1 \"{name}\" detail \"{age}\"",
        ]),
      HelpTopic(
        name: "table", group: .presentation,
        syntax: ["table PROVIDER with CELL [style plain|grouped|insetGrouped]"],
        summary:
          "An adapter: joins a provider and a cell into a data source a view can show. Template fields are checked against the provider's fields. style is the table view's style, which pictures draw (see html): plain (the default), grouped, or insetGrouped (Settings); the tables of a composition are one table view, so they cannot ask for different styles.",
        examples: [people + "\nshow table people | section by team with cell basic \"{name}\""]),
      HelpTopic(
        name: "html", group: .presentation,
        syntax: [
          "show TABLE as html", "show TABLE as svg", "export TABLE to \"PATH.html\"",
          "export TABLE to \"PATH.svg\"",
        ],
        summary:
          "Draws a table as an iPhone would, to look at a layout before writing it. as html prints one self-contained page (inline CSS, no script, no network): the system font, 44-point rows, the four cell styles as UIKit lays them out (basic; subtitle with the detail under the text; value1 with the detail right-aligned and grey; value2 with the small blue label on the left), accessories, separators inset to the text, headers and footers (small capitals in grouped styles), the section index, placeholders centred, grids as cards, and a segmented control above a segmented table (inside a compose, above the segmented source's first section); a plain table's section header sticks to the top of the page while its rows scroll past, as on iOS. as svg draws the same picture as one SVG image for README files and pull requests (an SVG cannot measure text, so long labels are cut by an estimate). The table's style (table … style insetGrouped), set appearance and set device change the picture; a long view draws the window rows A..B asks for, and then the page says N rows (M shown) (a whole view, as a table view, shows no count). A bare provider is drawn with a default cell: a subtitle cell of its first text field and the next (show people as html). Text in any script draws where a font for it is installed: the fonts named run from the system's through those for Chinese, Japanese, Korean, Arabic, Hebrew and emoji to the generic sans-serif.",
        examples: [
          people
            + "\nset appearance dark\nexport table people | section by team with cell value1 \"{name}\" detail \"{team}\" style insetGrouped | header \"{section}\" to \"/tmp/dsh-team.html\"",
          "show table [\"Profile\", \"Settings\"] with cell basic \"{.}\" accessory disclosure style grouped as svg",
        ]),
      HelpTopic(
        name: "swift", group: .presentation,
        syntax: ["show TABLE as swift", "export TABLE to \"PATH.swift\""],
        summary:
          "Prints a complete Swift program (a main.swift) that builds the same screen with DataSourceKit, one named value per piece (the provider, each stage, the cell, the table, each decorator), and prints it as show … as plain does: built against DataSourceKit (and DataSourceKitFiles or DataSourceKitSQLite for files), it prints exactly that text. Lists are written into the program, files by their absolute path. Every kind of piece is written: the sources (lists, ranges, csv, json, sqlite, http, paged), the stages (where, sort by, section by, limit, offset, extend with its window functions and aggregates as DerivedProvider.windowed, select, group by, distinct, join with all and full; not sample and random(), which are for looking at data and draw anew each run, not a screen), cells, cards and cells when, the decorators, compose and segmented; expressions with their functions, formats and aggregates use Value's operations, which answer as dsh does. A bound name is written from its definition, so a provider edited since (insert, update, delete, move, more) is refused: the program could not show the edit. A provider shown bare prints its table of fields.",
        examples: [
          people
            + "\nshow table people | where age > 40 | sort by name with cell value1 \"{name}\" detail \"{age}\" | header \"Over 40\" as swift",
          people
            + "\nexport table people | section by team with cell basic \"{name}\" | footer \"{count} people\" to \"/tmp/dsh-Team.swift\"",
        ]),
      HelpTopic(
        name: "grid", group: .presentation, syntax: ["grid PROVIDER with CARD [columns N]"],
        summary:
          "An adapter for a collection-style grid: each item is a card of a fixed size, as many to a row as fit the width (or N), sections keeping their headers and footers. Only the cards shown are built, as in a table.",
        examples: [
          people
            + "\nshow grid people | section by team with card \"{name}\\n{age} yrs\" width 18 height 2 | header \"{section}\""
        ]),
      HelpTopic(
        name: "card", group: .presentation, syntax: ["card \"TEMPLATE\" [width W] [height H]"],
        summary:
          "A cell for a grid: a multi-line template (\\n between lines) drawn in a box W columns wide and H lines high (20 wide and as high as the template unless given).",
        examples: ["let badge = card \"{name}\\n{team}\" width 16 height 2"]),
      HelpTopic(
        name: "header", group: .presentation,
        syntax: ["TABLE | header \"TEMPLATE\"", "TABLE | footer \"TEMPLATE\""],
        summary:
          "Decorators: a line above (header) or below (footer) every section. {section} is the section's key and {count} its number of items; aggregates cover the section's items ({sum(price):.2f}; see aggregates). They stack in any number and order: a later header stands above earlier ones, a later footer below.",
        examples: [
          people
            + "\nshow table people | section by team with cell basic \"{name}\" | header \"{section}\" | footer \"{count} people\""
        ]),
      HelpTopic(
        name: "footer", group: .presentation, syntax: ["TABLE | footer \"TEMPLATE\""],
        summary: "A line below every section; see header.",
        examples: ["show table [\"a\", \"b\"] with cell basic \"{.}\" | footer \"{count} letters\""]),
      HelpTopic(
        name: "compose", group: .presentation, syntax: ["compose TABLE, TABLE, …"],
        summary:
          "Stacks the sections of several tables into one view: static sections above and below dynamic content, each child keeping its presenter and decorators. A `|` after a child belongs to that child; put a compose in parentheses to decorate the whole.",
        examples: [
          people
            + "\nlet menu = table [\"Profile\", \"Settings\"] with cell basic \"{.}\" accessory disclosure | header \"Menu\"\nshow compose menu, (table people with cell basic \"{name}\" | header \"People\")"
        ]),
      HelpTopic(
        name: "cells", group: .presentation, syntax: ["cells when PREDICATE use CELL, …, else CELL"],
        summary:
          "A presenter with several cell kinds: each item gets the cell of the first case whose predicate it meets, else the last. Each kind has its own reuse identifier (a cell bound to a name uses the name), which stats shows.",
        examples: [
          "let promo = cell subtitle \"{text}\" detail \"sponsored\"\nlet row = cell basic \"{text}\"\nshow table [{kind: \"post\", text: \"Hi\"}, {kind: \"ad\", text: \"Buy\"}] with cells when kind == \"ad\" use promo, else row"
        ]),
      HelpTopic(
        name: "segmented", group: .presentation, syntax: ["segmented NAME: TABLE, NAME: TABLE, …"],
        summary:
          "Holds several tables and shows one at a time, like a segmented control over a table view; the first is shown until switch changes it. show draws the control above the rows ([everyone]  menu, the segment shown in brackets), as browse does, and a picture draws it as UIKit's; inside a compose it stands above the segmented source's first section. Its state is the strongest of all its segments'.",
        examples: [
          people
            + "\nlet tabs = segmented everyone: (table people with cell basic \"{name}\"), menu: (table [\"Profile\"] with cell basic \"{.}\")\ndescribe tabs"
        ]),
      HelpTopic(
        name: "placeholder", group: .presentation,
        syntax: ["TABLE | placeholder [empty \"TEMPLATE\"] [error \"TEMPLATE\"]"],
        summary:
          "Covers a table that has no content, or whose provider failed to load, with a message in place of its rows; the covered table reports zero rows. {error} is what went wrong.",
        examples: [
          people
            + "\nshow table people | where age > 100 with cell basic \"{name}\" | placeholder empty \"No one over 100\" error \"Could not load: {error}\""
        ]),
      HelpTopic(
        name: "title", group: .presentation,
        syntax: ["TABLE | title \"TEMPLATE\"", "TABLE | caption \"TEMPLATE\""],
        summary:
          "A line above (title) or below (caption) the whole view, as a table's header and footer views. {count} is the number of rows.",
        examples: [
          people
            + "\nshow table people | limit 2 with cell basic \"{name}\" | title \"People\" | caption \"{count} shown\""
        ]),
      HelpTopic(
        name: "caption", group: .presentation, syntax: ["TABLE | caption \"TEMPLATE\""],
        summary: "A line below the whole view; see title.",
        examples: ["show table [1, 2] with cell basic \"{.}\" | caption \"{count} numbers\""]),
      HelpTopic(
        name: "index", group: .presentation, syntax: ["TABLE | index"],
        summary:
          "A section index made from the sections' keys, as a table view's index titles down its side.",
        examples: [
          people
            + "\nshow table people | section by team with cell basic \"{name}\" | header \"{section}\" | index"
        ]),
      HelpTopic(
        name: "templates", group: .language,
        syntax: [
          "\"{field}\"  \"{a.b}\"  \"{.}\"  \"{#}\"  \"{section}\"  \"{count}\"  \"{field:>8.2f}\"  \"{price * qty:>8.2f}\"  \"{x:,.2f}\"  \"{x:.1%}\"  \"{day:%b %Y}\"  \"{count|person|people}\""
        ],
        summary:
          "Text with holes: any expression (a field, a nested path, price * qty, upper(name)), the item itself, the row's number in its section (from 1); in headers and footers the section's key and item count. A format after ':' sets alignment (< > ^), width, precision and type, or for dates strftime codes (%Y %m %d %b %B %a %H %M %S); as Python's format, ',' groups thousands, 'f' is fixed-point ({price:.2f} → 3.14), 'e' scientific, 'g' general, '%' a percentage ({total:,.2f} → 1,234,567.89; {share:.1%} → 41.3%), and a precision with no type counts significant digits, as Python reads it ({x:.3} writes 3.14159 as 3.14 and 1234.5 as 1.23e+03; an int is written as the double it is, where Python refuses it); a text's precision cuts it ({name:.2} → Ad); |ONE|MANY writes a number with the word for its count ({count|person|people}: 1 person, 3 people). A double with no format shows at a readable precision where it carries arithmetic's noise, 15 or more significant digits (an average of 41.333333333333336 shows 41.33, 0.30000000000000004 shows 0.3; 37.774929512345 shows as written), as tables do; csv and json output keep the exact value. {{ and }} are literal braces. A field the provider does not have is an error, with a suggestion.",
        examples: [
          people + "\nshow table people | limit 2 with cell basic \"{#}. {name:<16}{age:>4}\"",
          people
            + "\nshow table people | limit 2 with cell subtitle \"{upper(name)}\" detail \"{age * 12} months, since {date(joined):%b %Y}\"",
          people
            + "\nshow table people | section by team with cell basic \"{name}\" | footer \"{count|person|people}, {avg(age)} on average\"",
          "show table [{city: 'Boston', people: 675647, share: 0.0961}] with cell subtitle \"{city}\" detail \"{people:,} people, {share:.1%} of the state, {people * 1.5:,.2f}\"",
          people
            + "\nshow table people | section by team with cell basic \"{name}\" | footer \"median age {median(age)}, 90% under {quantile(age, 0.9)}\"",
        ]),
      HelpTopic(
        name: "expressions", group: .language,
        syntax: [
          "+ - * / %  == != < <= > >=  and or not  in [..]  contains [ignoring case]  like  ilike  starts with  ends with  matches  is [not] null  ( )"
        ] + ExpressionFunction.allCases.map(\.signature),
        summary:
          "One expression language wherever a field goes: where, sort by, section by, extend, select, templates, update … set and delete … where. + - * / % work on numbers (ints stay ints except /, which gives a double; division by zero gives null and a note), + joins text, and a date plus or minus an int is that many days later or earlier (day + 7; a date outside the years 1 to 9999 is null with a note). ints and doubles compare as numbers, exactly. Comparing values of different types (text with a number, a date with text) is an error with a fix. Text is written in double or single quotes (\"Ada\", 'Ada'; in single quotes '' is a quote). Null: arithmetic with null is null; a comparison with null is false, except == null and != null (x is null and x is not null say the same). Functions give null for a null argument (but coalesce and if; the pattern tests like, ilike, starts_with, ends_with and matches are comparisons, so false). A conversion that finds no value (int(\"x\"), date(name)) gives null, and a note after the statement names the texts, the first three of many with how many others. There is no now(): a script gives the same answer every run. Examples of each function: "
          + ExpressionFunction.allCases.map { "\($0.example.expression) → \($0.example.result)" }.joined(
            separator: "; ")
          + ".",
        examples: [
          "show [{price: 2.5, qty: 4}, {price: 3, qty: 0}] | extend total = price * qty, each = price / qty",
          "show range 1..10 | where . % 3 == 0",
          "show [{s: '  a, b ,c  '}] | extend t = trim(s), r = replace(s, ' ', ''), parts = split(trim(s), ','), n = len(split(s, ','))",
          "show [{name: 'Ada', team: null}, {name: 'Grace', team: 'Engineering'}] | where team is not null",
          "let prices = csv \"samples:prices.csv\" null \"N/A\" types {day: date \"%b %d %Y\"}\nshow prices | where year(day) == 2000 and month(day) == 4 | sort by close desc",
          "let penguins = csv \"samples:penguins.csv\" null \"NA\"\nshow penguins | section by species | sort by body_mass_g desc | select species, kg = round(body_mass_g / 1000, 1), bill = coalesce(text(bill_length_mm), \"?\")",
        ]),
      HelpTopic(
        name: "types", group: .language,
        syntax: [
          "null \"TEXT\", …", "types {FIELD: bool|int|double|text|date|timestamp [\"FORMAT\"], …}",
        ],
        summary:
          "Values have types: null, bool, int, double, text, date (a day), timestamp (an instant, shown in UTC), list, record. Summaries and describe show each field's type and nulls (mass double (2 null)). On csv, json, sqlite and http sources, null lists texts read as null, and types gives fields a type instead of inferring it: dates and timestamps read ISO 8601, or a strptime format (%Y %y %m %d %e %b %B %a %A %H %I %p %M %S %f %z %j). A value that does not fit its type is an error naming the file, line, field and value.",
        examples: [
          "let prices = csv \"samples:prices.csv\" null \"N/A\" types {day: date \"%b %d %Y\", volume: double}\nprices\nshow prices | sort by day | select ticker, day, listed",
          "let penguins = csv \"samples:penguins.csv\" null \"NA\"\ndescribe penguins",
        ]),
      HelpTopic(
        name: "sql", group: .language,
        syntax: [
          "SELECT … FROM t WHERE … GROUP BY … ORDER BY … LIMIT N",
          "t | where … | group by … with … | sort by … | limit N",
        ],
        summary:
          "How SQL's clauses are said in dsh: as stages, in the order they run. SELECT a, b is | select a, b (a = EXPR names one; show X columns a, b picks them); WHERE is | where, with ==, !=, and, or, not, like, in, x is null; ORDER BY x DESC, y is | sort by x desc, y (nulls last either way); LIMIT n OFFSET m is | offset m | limit n (show X rows m..m+n shows a window); GROUP BY k with count(*) and sum(x) is | group by k with n = count(), s = sum(x), and HAVING a | where after it; SELECT DISTINCT is | distinct; JOIN … ON a = b is | join OTHER on a == OTHER.b as m (inner, all for every match, full, right: see join); SELECT count(*) is | count; window functions (OVER) are extend … by … within …; PIVOT and SUMMARIZE are pivot and summarize. A table's columns (\\d t, .schema) are describe NAME; CREATE TABLE t AS is let t = …; COPY TO and .output are export NAME to \"FILE\". SQL itself runs in its database: sqlite \"FILE\" query \"SELECT …\" and postgres \"CONNINFO\" query \"SELECT …\" are sources like any other.",
        examples: [
          people
            + "\nshow people | where age > 30 and team != null | group by team with n = count(), oldest = max(age) | where n > 1 | sort by oldest desc",
          "show sqlite \"samples:people.db\" query \"SELECT team, count(*) AS n FROM people GROUP BY team\"",
        ]),
      HelpTopic(
        name: "values", group: .language,
        syntax: ["\"text\"  42  3.5  true  false  null  [1, 2]  {name: \"Ada\", age: 36}  0..10  # comment"],
        summary:
          "Literals. Strings take escapes (\\n \\t \\\" \\\\ \\u{1F600}). A statement goes on over line ends while a bracket is open or a line ends with | or ,; ; separates statements on one line.",
        examples: ["let n = 42; n", "show [{name: \"Ada\", langs: [\"en\", \"fr\"]}] as json"]),
    ]

  /// Words a user asks help for that the expressions' topic answers.
  static let expressionWords: Set = [
    "functions", "function", "operators", "dates", "time", "times", "timestamps", "strings", "texts", "math",
    "numbers", "regex", "patterns",
  ]

  public static func topic(named name: String) -> HelpTopic? {
    if let command = Command(rawValue: name), command.helpTopic != name {
      return topic(named: command.helpTopic)
    }
    if name == Keyword.by.rawValue { return topic(named: StageKind.sort.rawValue) }
    // `help null`: how nulls compare and compute is the expressions'.
    if name == Keyword.null.rawValue { return topic(named: "expressions") }
    if let exact = topics.first(where: { $0.name == name }) { return exact }
    // `help sum`: an aggregate's help is the aggregates'.
    if AggregateFunction(rawValue: name) != nil { return topic(named: "aggregates") }
    if WindowFunction(rawValue: name) != nil { return topic(named: "extend") }
    // `help lower`, `help functions`, `help dates`: the functions and operators are the
    // expressions' (dates', texts' and numbers' among them).
    if ExpressionFunction(rawValue: name) != nil || Self.expressionWords.contains(name) {
      return topic(named: "expressions")
    }
    return nil
  }
}
