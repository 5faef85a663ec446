/// The page `serve` sends: the HTML `show X as html` draws, with the rows in view only, and a
/// script that keeps it in step with the session, as a table view keeps its cells.
///
/// A view of at most ``Serving/wholeRows`` rows is drawn whole, in the page's flow. A
/// longer one stands in a list as tall as its rows would be (at most 8 million pixels, past
/// which browsers stop laying out): the script draws a window of rows where the scroll position
/// stands for, asking the session for it (`/window`), and asks again as the screen leaves it.
///
/// A batch says which rows and sections go, come, move and reload, by index path. The script
/// maps the row at the top of the screen through it, asks for the window around that row's new
/// place, and puts it on the screen with the row where it was: the rows that stay are the same
/// elements, moved (they slide to their new places), the new ones fade in, the deleted ones fade
/// out, the reloaded ones flash. After each batch the window's text must equal what the session
/// drew; when it does not (a batch that does not fit what the page shows), the window is drawn
/// as the session drew it and the console says so. `window.dshPreview` tells a test (or a
/// curious user) the state shown, the rows drawn, and how many batches fell back.
enum PreviewPage {
  /// The page of the first window, with the live script.
  static func page(_ window: ServedWindow, version: Int, serving: String, token: String) -> String {
    let parts = window.parts
    let state =
      "{\"version\": \(version), \"from\": \(window.rows.lowerBound), \"to\": \(window.rows.upperBound), \"total\": \(window.total), \"counts\": ["
      + (window.counts ?? []).map(String.init).joined(separator: ",") + "]}"
    // No icon to ask for: a browser's request for /favicon.ico carries no token, and is refused.
    let head = parts.head.replacingOccurrences(
      of: "<meta charset=\"utf-8\">", with: "<meta charset=\"utf-8\">\n<link rel=\"icon\" href=\"data:,\">")
    return head + """
      <main class="screen" style="width: \(parts.width)px">
      <div id="dsh-top">\(parts.top)</div>
      <div id="dsh-list">\(parts.table)</div>
      <div id="dsh-bottom">\(parts.bottom)</div>
      </main>
      <script type="application/json" id="dsh-state">\(state)</script>
      <script>
      \(script(serving: serving, token: token))</script>
      </body>
      </html>

      """
  }

  // The script is plain JavaScript of the browsers' common subset (no build step); it runs once
  // per page. A page that loses its socket connects again after a second, while the server it
  // reaches is the same serving; told that serving stopped, or refused by what now listens
  // there (another serving's token), it says so at its top and stays as it was.
  private static func script(serving: String, token: String) -> String {
    #"""
    (() => {
      "use strict";
      let serving = "\#(serving)";
      const token = "\#(token)";
      // A view of at most this many rows is drawn whole; the list is at most this tall.
      const WHOLE = \#(Serving.wholeRows);
      const TALLEST = 8000000;
      const state = JSON.parse(document.getElementById("dsh-state").textContent);
      let stopped = false;
      let shown = state.version;
      let received = shown;
      let fallbacks = 0;
      let catchups = 0;
      let working = false;
      const queue = [];
      // The state shown: the rows of each section, and the rows drawn (flat positions).
      let counts = state.counts;
      let starts = startsOf(counts);
      let total = state.total;
      let from = state.from;
      let to = state.to;
      // A drawn row's height, its section's header and footer spread over its rows.
      let rowHeight = 0;
      window.dshPreview = {
        get version() { return shown; },
        get received() { return received; },
        get idle() { return !working && queue.length === 0 && shown === received && covered(); },
        get fallbacks() { return fallbacks; },
        get catchups() { return catchups; },
        get stopped() { return stopped; },
        get rows() { return total; },
        get drawn() { return [from, to]; },
      };

      // Serving stopped: the page keeps its last state and says it is no longer live.
      function stop(reason) {
        stopped = true;
        banner("dsh-stopped", reason, "#b3261e");
      }

      // A note fixed at the page's top (`text` null: none).
      function banner(id, text, background) {
        let note = document.getElementById(id);
        if (!text) {
          if (note) note.remove();
          return;
        }
        if (!note) {
          note = document.createElement("div");
          note.id = id;
          Object.assign(note.style, {
            position: "fixed", top: "0", left: "0", right: "0", padding: "6px 10px", zIndex: "10",
            font: "13px -apple-system, system-ui, sans-serif", background, color: "#fff",
          });
          document.body.appendChild(note);
        }
        note.textContent = text;
      }

      function connect() {
        if (stopped) return;
        const socket = new WebSocket(`ws://${location.host}/live?token=${token}&serving=${serving}&after=${received}`);
        socket.onmessage = (event) => {
          let message;
          try {
            message = JSON.parse(event.data);
          } catch (error) {
            console.warn("dsh: a message that is not JSON", event.data);
            return;
          }
          if (message.kind === "stopped") {
            stop("dsh stopped serving this view: this is its last state");
            return;
          }
          if (message.kind === "layout") {
            received = message.version;
            queue.push({ layout: true });
          } else {
            received += 1;
            queue.push({ batch: message, version: received });
          }
          pump();
        };
        socket.onclose = () => setTimeout(reconnect, 1000);
      }

      // Connects again to the same serving only: a server that refuses the token is another.
      async function reconnect() {
        if (stopped) return;
        try {
          const response = await fetch(`/state?token=${token}`, { cache: "no-store" });
          if (response.status === 403 || response.headers.get("X-DSH-Serving") !== serving) {
            stop("dsh no longer serves this view here: this is its last state");
            return;
          }
        } catch (error) {
          // Nothing answers (dsh was stopped by a signal, or the machine went): the page says so
          // after a few tries, and goes on trying.
          unanswered += 1;
          if (unanswered === 3) warn("dsh does not answer at this address: this is the last state it sent");
          setTimeout(reconnect, unanswered < 3 ? 1000 : 2000);
          return;
        }
        if (unanswered >= 3) warn(null);
        unanswered = 0;
        connect();
      }
      let unanswered = 0;

      // A note at the page's top while dsh does not answer (null: it answers again).
      const warn = (text) => banner("dsh-unanswered", text, "#8a6d00");

      // Follows the batches in turn, then draws what the screen needs; one at a time.
      // A request that failed (dsh busy past a minute, or gone a moment) is made again after a
      // second; a batch waits for it at the front of the queue.
      async function pump() {
        if (working) return;
        working = true;
        let failed = false;
        try {
          let windows = 0;
          while (true) {
            if (queue.length > 0) {
              const item = queue[0];
              if (item.layout) {
                await redraw();
              } else if (item.version <= shown) {
                // drawn already: a redraw or a catch-up showed a later state
              } else if (item.version !== shown + 1) {
                await redraw();
              } else {
                await follow(item.batch, item.version, queue.length === 1 && !document.hidden);
              }
              queue.shift();
              continue;
            }
            if (covered() || windows++ > 8) break;
            // false: the session is further on, and its batch is on the way (or came meanwhile).
            if (!(await bringIntoView()) && queue.length === 0) break;
          }
        } catch (error) {
          failed = true;
          console.warn("dsh: could not follow the session; trying again in a second", error);
        } finally {
          working = false;
          if (queue.length > 0 || (failed && !covered())) setTimeout(pump, failed ? 1000 : 0);
        }
      }

      // MARK: Where rows stand

      function startsOf(list) {
        const result = [0];
        for (const count of list) result.push(result[result.length - 1] + count);
        return result;
      }

      const list = () => document.getElementById("dsh-list");
      const table = () => list().firstElementChild;
      const key = (section, row) => `${section}:${row}`;
      const screenRows = () => Math.ceil(window.innerHeight / (rowHeight || 44)) + 1;

      // The drawn element of a row (flat position), or null.
      function rowElement(flat) {
        if (flat < from || flat >= to) return null;
        let low = 0;
        let high = counts.length - 1;
        while (low < high) {
          const middle = (low + high) >> 1;
          if (starts[middle + 1] > flat) high = middle; else low = middle + 1;
        }
        return table().querySelector(`section[data-section="${low}"] [data-row="${flat - starts[low]}"]`);
      }

      const offsetIn = (outer, inner) => inner.getBoundingClientRect().top - outer.getBoundingClientRect().top;

      // What the scroll position stands for: p from 0 (the list's top at the screen's top) to 1
      // (its end at the screen's bottom), and the row there (fractional), p of the rows.
      function position() {
        const box = list();
        const range = box.offsetHeight - window.innerHeight;
        const p = range > 0 ? Math.min(1, Math.max(0, -box.getBoundingClientRect().top / range)) : 0;
        return { p, row: p * total };
      }

      // Whether the drawn rows fill the screen where the scroll position stands.
      // (Drawn a screen past it both ways, or to the view's end that way.)
      function covered() {
        if (total <= WHOLE) return from === 0 && to === total;
        const box = list().getBoundingClientRect();
        const drawn = table().getBoundingClientRect();
        const screen = window.innerHeight;
        const top = Math.max(0, box.top);
        const bottom = Math.min(screen, box.bottom);
        if (bottom <= top) return true;
        return (from === 0 ? drawn.top <= top + 1 : drawn.top <= top - screen)
          && (to === total ? drawn.bottom >= bottom - 1 : drawn.bottom >= bottom + screen);
      }

      // Whether the screen is at an end of the list with rows past it not drawn: the end of a
      // list scaled to fit the browser, reached a pixel for a pixel before its rows were.
      function atAnEnd() {
        const box = list().getBoundingClientRect();
        return (box.top >= -1 && from > 0) || (box.bottom <= window.innerHeight + 1 && to < total);
      }

      // Stands the drawn rows in the list: a whole view in the page's flow; a long one where the
      // scroll position stands for, or with the row `anchor.flat` at `anchor.y` on the screen.
      function place(anchor) {
        const box = list();
        const drawn = table();
        if (total <= WHOLE) {
          box.style.height = "";
          Object.assign(drawn.style, { position: "", top: "", left: "", right: "" });
          return;
        }
        if (!rowHeight) rowHeight = Math.max(16, drawn.offsetHeight / Math.max(1, to - from));
        const height = Math.max(Math.min(total * rowHeight, TALLEST), drawn.offsetHeight);
        box.style.position = "relative";
        box.style.height = `${height}px`;
        Object.assign(drawn.style, { position: "absolute", left: "0", right: "0" });
        const element = anchor && rowElement(anchor.flat);
        let top;
        if (element) {
          // The row stays where it was on the screen; the first rows start the list, the last
          // end it.
          drawn.style.top = "0px";
          top = anchor.y - box.getBoundingClientRect().top - offsetIn(drawn, element);
          if (from === 0) top = Math.min(top, 0);
          if (to === total) top = Math.max(top, height - drawn.offsetHeight);
        } else {
          const listTop = box.getBoundingClientRect().top;
          const { p, row } = position();
          drawn.style.top = "0px";
          const at = rowElement(Math.min(Math.floor(row), total - 1));
          let y = drawn.offsetHeight;
          if (at && row < total) y = offsetIn(drawn, at) + (row % 1) * at.offsetHeight;
          top = -listTop + p * window.innerHeight - y;
        }
        drawn.style.top = `${Math.max(0, Math.min(top, height - drawn.offsetHeight))}px`;
      }

      // Places the drawn rows with the row `anchor.flat` where it was (`anchor.y` on the
      // screen), in a long list or in the page's flow (then by scrolling); without an anchor, a
      // long list where the scroll position stands for, the page's flow at `scrollY`.
      function keep(anchor, scrollY) {
        if (total > WHOLE) {
          place(anchor);
          return;
        }
        place(null);
        window.scrollTo(window.scrollX, scrollY);
        const element = anchor && rowElement(anchor.flat);
        if (element) window.scrollBy(0, element.getBoundingClientRect().top - anchor.y);
      }

      // MARK: Windows

      async function fetchWindow(query, withCounts) {
        const response = await fetch(`/window?token=${token}&${query}${withCounts ? "&counts=1" : ""}`, { cache: "no-store" });
        if (!response.ok) throw new Error(`/window: ${response.status} ${await response.text()}`);
        return response.json();
      }

      function element(html) {
        const template = document.createElement("template");
        template.innerHTML = html;
        return template.content.firstElementChild;
      }

      // The parts around the rows, when they changed.
      function drawFrame(w) {
        for (const [id, html] of [["dsh-top", w.top], ["dsh-bottom", w.bottom]]) {
          const part = document.getElementById(id);
          if (part && part.innerHTML !== html) part.innerHTML = html;
        }
      }

      // Takes the window `w` of state `version` as it is.
      function draw(w, version) {
        if (w.counts) {
          counts = w.counts;
          starts = startsOf(counts);
        }
        total = w.total;
        from = w.from;
        to = w.to;
        table().replaceWith(element(w.table));
        drawFrame(w);
        shown = version;
      }

      // The first drawn row on the screen and where, or null when the drawn rows are off it.
      function rowOnScreen() {
        const top = Math.max(0, list().getBoundingClientRect().top);
        for (const section of table().querySelectorAll("section[data-section]")) {
          const s = Number(section.dataset.section);
          for (const row of section.querySelectorAll("[data-row]")) {
            const rect = row.getBoundingClientRect();
            if (rect.top >= window.innerHeight) return null;
            if (rect.bottom > top) return { flat: starts[s] + Number(row.dataset.row), y: rect.top };
          }
        }
        return null;
      }

      // Draws the rows the screen needs; false when the session is at a state the page has yet
      // to follow (its batch is on the way). A scroll that keeps drawn rows on the screen goes
      // on from them, a pixel for a pixel; a jump (the scroll bar dragged) goes to the rows the
      // scroll position stands for.
      async function bringIntoView() {
        const seen = screenRows();
        const anchor = total > WHOLE && !atAnEnd() ? rowOnScreen() : null;
        const at = anchor ? anchor.flat : Math.min(Math.floor(position().row), Math.max(0, total - 1));
        const w = await fetchWindow(`from=${Math.max(0, at - 4 * seen)}&to=${at + 5 * seen}`, false);
        if (w.version !== shown) return false;
        draw(w, shown);
        place(anchor);
        return true;
      }

      // The page of the state now, drawn whole: the view was bound again, a setting changed how
      // it looks, or the page fell too far behind.
      async function redraw() {
        const response = await fetch(`/?token=${token}`, { cache: "no-store" });
        if (!response.ok) throw new Error(`/: ${response.status}`);
        const version = Number(response.headers.get("X-DSH-Version"));
        serving = response.headers.get("X-DSH-Serving") || serving;
        const doc = new DOMParser().parseFromString(await response.text(), "text/html");
        const style = doc.querySelector("style");
        const mine = document.querySelector("style");
        if (style && mine) mine.textContent = style.textContent;
        document.body.className = doc.body.className;
        document.title = doc.title;
        const viewport = doc.querySelector('meta[name="viewport"]');
        const ours = document.querySelector('meta[name="viewport"]');
        if (viewport && ours) ours.setAttribute("content", viewport.getAttribute("content"));
        const next = JSON.parse(doc.getElementById("dsh-state").textContent);
        const y = window.scrollY;
        const anchor = rowOnScreen();
        const main = document.querySelector("main");
        main.replaceWith(document.importNode(doc.querySelector("main"), true));
        counts = next.counts;
        starts = startsOf(counts);
        total = next.total;
        from = next.from;
        to = next.to;
        rowHeight = 0;
        shown = version;
        // The row at the top stays there when the view still has it (a setting, not a new view).
        if (anchor && anchor.flat < total && total > WHOLE) {
          const w = await fetchWindow(`from=${Math.max(0, anchor.flat - 200)}&to=${anchor.flat + 300}`, false);
          if (w.version === shown) draw(w, shown);
        }
        place(null);
        keep(anchor && anchor.flat < total ? anchor : null, y);
      }

      // MARK: Batches

      // How `batch` maps the rows of the state shown to the next, as UIKit reads it: the
      // sections and rows that stay fill the places nothing comes to, in order. null when the
      // sections do not fit.
      function mapping(batch, before = counts) {
        const oldCount = before.length;
        const deletedSections = new Set(batch.deletedSections);
        const insertedSections = new Set(batch.insertedSections);
        const sectionTo = new Map(batch.movedSections.map(([a, b]) => [a, b]));
        const sectionFrom = new Map(batch.movedSections.map(([a, b]) => [b, a]));
        const newCount = oldCount - deletedSections.size + insertedSections.size;
        const newOfOld = new Array(oldCount).fill(-1);
        const oldOfNew = new Array(newCount).fill(-1);
        let next = 0;
        for (let i = 0; i < oldCount; i++) {
          if (deletedSections.has(i)) continue;
          if (sectionTo.has(i)) {
            newOfOld[i] = sectionTo.get(i);
            oldOfNew[sectionTo.get(i)] = i;
            continue;
          }
          while (next < newCount && (insertedSections.has(next) || sectionFrom.has(next))) next++;
          if (next >= newCount) return null;
          newOfOld[i] = next;
          oldOfNew[next] = i;
          next++;
        }
        const gone = new Map(); // old section -> its rows that go (deleted or moved away), sorted
        const come = new Map(); // new section -> its rows that come (inserted or moved in), sorted
        const add = (map, section, row) => (map.get(section) || map.set(section, []).get(section)).push(row);
        const deleted = new Set();
        const inserted = new Set();
        const movedTo = new Map();
        const movedFrom = new Map();
        for (const [s, r] of batch.deletedRows) { add(gone, s, r); deleted.add(key(s, r)); }
        for (const [s, r] of batch.insertedRows) { add(come, s, r); inserted.add(key(s, r)); }
        for (const [a, b] of batch.movedRows) {
          add(gone, a[0], a[1]);
          add(come, b[0], b[1]);
          movedTo.set(key(a[0], a[1]), b);
          movedFrom.set(key(b[0], b[1]), a);
        }
        for (const map of [gone, come]) for (const rows of map.values()) rows.sort((a, b) => a - b);
        const below = (rows, row) => (rows || []).filter((r) => r < row).length;
        const reloadedBefore = new Set(batch.reloadedRows.map(([s, r]) => key(s, r)));
        const reloadedAfter = new Set(batch.reloadedAfterMoves.map(([s, r]) => key(s, r)));
        // Row r of section s on one side of the batch, on the other side: null when it is
        // deleted (inserted) there, the other end of its move, or else its place among the
        // rows that stay, which keep their order around the rows that leave and arrive.
        function across(s, r, sections, away, jumps, leaving, arriving) {
          if (away.has(key(s, r))) return null;
          if (jumps.has(key(s, r))) return jumps.get(key(s, r));
          const other = sections[s];
          if (other === undefined || other < 0) return null;
          let k = r - below(leaving.get(s), r);
          for (const taken of arriving.get(other) || []) { if (taken <= k) k++; else break; }
          return [other, k];
        }
        return {
          // Where old row (s, r) is in the next state; null when it goes.
          next: (s, r) => across(s, r, newOfOld, deleted, movedTo, gone, come),
          // Which old row new row (j, k) was; null when it comes.
          previous: (j, k) => across(j, k, oldOfNew, inserted, movedFrom, come, gone),
          moved: (s, r) => movedTo.has(key(s, r)),
          reloaded: (old, now) => reloadedBefore.has(key(old[0], old[1])) || reloadedAfter.has(key(now[0], now[1])),
          // The rows of each section next, when the batch says them all (an inserted section's do not).
          counts() {
            if (insertedSections.size > 0) return null;
            return oldOfNew.map((i, j) => before[i] - (gone.get(i) || []).length + (come.get(j) || []).length);
          },
        };
      }

      // Where the row at `path` of state `version` (whose sections hold `sizes` rows) is in state
      // `last`, through the batches waiting in the queue; null when one is missing, or the row
      // goes, or sections come (their sizes are not in a batch).
      function through(path, sizes, version, last) {
        let place = path;
        let held = sizes;
        let at = version;
        for (const item of queue) {
          if (at === last) break;
          if (item.layout || item.version <= at) continue;
          if (item.version !== at + 1) return null;
          const map = mapping(item.batch, held);
          const next = map && map.next(place[0], place[1]);
          held = map && map.counts();
          if (!next || !held) return null;
          place = next;
          at = item.version;
        }
        return at === last ? place : null;
      }

      // The drawn rows by index path.
      function drawnRows(within) {
        const rows = new Map();
        for (const section of within.querySelectorAll("section[data-section]")) {
          const s = Number(section.dataset.section);
          for (const row of section.querySelectorAll("[data-row]")) rows.set(key(s, Number(row.dataset.row)), row);
        }
        return rows;
      }

      // The first row on the screen that stays where it is in the next state, and where.
      function anchorRow(map) {
        const top = Math.max(0, list().getBoundingClientRect().top);
        for (const section of table().querySelectorAll("section[data-section]")) {
          const s = Number(section.dataset.section);
          for (const row of section.querySelectorAll("[data-row]")) {
            const rect = row.getBoundingClientRect();
            if (rect.bottom <= top) continue;
            const r = Number(row.dataset.row);
            if (map.moved(s, r)) continue;
            const next = map.next(s, r);
            if (next) return { next, y: rect.top };
          }
        }
        return null;
      }

      // Follows the batch to state `version`: the window around the row kept in place, drawn
      // with the rows that stay as the same elements.
      async function follow(batch, version, animate) {
        const map = mapping(batch);
        const anchor = map && anchorRow(map);
        const after = map && map.counts();
        const seen = screenRows();
        const query = anchor
          ? `section=${anchor.next[0]}&row=${anchor.next[1]}&before=${3 * seen}&after=${6 * seen}`
          : `from=${from}&to=${Math.max(to, from + 9 * seen)}`;
        let w = await fetchWindow(query, !after);
        const y = window.scrollY;
        if (w.version !== version) {
          // The session is further on: its state drawn as it is, the batches between skipped,
          // and the row at the top followed through them where they have all come.
          // (Their messages left before the window did: they are here, or a moment away.)
          for (let waited = 0; waited < 50 && received < w.version; waited++) {
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          const kept = anchor && after ? through(anchor.next, after, version, w.version) : null;
          w = await fetchWindow(
            kept ? `section=${kept[0]}&row=${kept[1]}&before=${3 * seen}&after=${6 * seen}` : query, true);
          catchups += 1;
          draw(w, w.version);
          keep(kept && w.version === shown ? { flat: starts[kept[0]] + kept[1], y: anchor.y } : null, y);
          return;
        }
        if (!w.counts) w.counts = after;
        const animation = map && swap(w, map, batch, version, animate);
        if (!animation) {
          fallbacks += 1;
          console.warn(`dsh: a batch did not apply to what the page shows; drawn from state ${version}`, batch);
          draw(w, version);
        }
        keep(anchor ? { flat: starts[anchor.next[0]] + anchor.next[1], y: anchor.y } : null, y);
        // The rows that stay slide from where they stood to where they stand now.
        if (animation) animation();
      }

      // Puts the window `w` of the next state on the page, the rows that stay moved into it;
      // returns what animates the change once the rows are placed, or null when the window's
      // text is not what the session drew.
      function swap(w, map, batch, version, animate) {
        const old = table();
        const next = element(w.table);
        const expected = next.textContent;
        const oldRows = drawnRows(old);
        const kept = []; // [the page's row, the row of the next window it stands for]
        const entering = [];
        const flashing = [];
        for (const [path, row] of drawnRows(next)) {
          const [j, k] = path.split(":").map(Number);
          const was = map.previous(j, k);
          const mine = was && oldRows.get(key(was[0], was[1]));
          if (mine && !map.reloaded(was, [j, k])) {
            kept.push([mine, row]);
            oldRows.delete(key(was[0], was[1]));
          } else {
            (was ? flashing : entering).push(row);
          }
        }
        const supplements = (sections, selector) => sections.flatMap((j) =>
          Array.from(next.querySelectorAll(`section[data-section="${j}"] > ${selector}`)));
        flashing.push(...supplements(batch.reloadedHeaders, ".header"));
        flashing.push(...supplements(batch.reloadedFooters, ".footer"));
        flashing.push(...supplements(batch.reloadedPlaceholders, ".placeholder"));

        // What goes: copies fade where they stood.
        const leaving = animate ? Array.from(oldRows.values()).filter((row) =>
          map.next(Number(row.closest("section").dataset.section), Number(row.dataset.row)) === null) : [];
        const ghosts = leaving.map((gone) => {
          const rect = gone.getBoundingClientRect();
          const ghost = gone.cloneNode(true);
          Object.assign(ghost.style, {
            position: "absolute", left: `${rect.left + window.scrollX}px`, top: `${rect.top + window.scrollY}px`,
            width: `${rect.width}px`, height: `${rect.height}px`, margin: "0", pointerEvents: "none",
          });
          return ghost;
        });
        const before = animate ? new Map(kept.map(([row]) => [row, row.getBoundingClientRect().top])) : null;

        // The rows that stay are the same elements, in their new places (and numbered so).
        for (const [row, stand] of kept) {
          row.dataset.row = stand.dataset.row;
          stand.replaceWith(row);
        }
        next.style.cssText = old.style.cssText;
        old.replaceWith(next);
        if (next.textContent !== expected) return null;
        counts = w.counts;
        starts = startsOf(counts);
        total = w.total;
        from = w.from;
        to = w.to;
        drawFrame(w);
        shown = version;
        return () => {
          if (!animate) return;
          for (const ghost of ghosts) {
            document.body.appendChild(ghost);
            ghost.animate([{ opacity: 1 }, { opacity: 0, transform: "translateX(-12px)" }], { duration: 250, easing: "ease-in" })
              .finished.then(() => ghost.remove(), () => ghost.remove());
          }
          for (const [row] of kept) {
            const dy = before.get(row) - row.getBoundingClientRect().top;
            if (dy !== 0) row.animate([{ transform: `translateY(${dy}px)` }, { transform: "none" }], { duration: 300, easing: "ease-out" });
          }
          for (const row of entering) {
            row.animate([{ opacity: 0, transform: "translateY(-8px)" }, { opacity: 1, transform: "none" }], { duration: 300, easing: "ease-out" });
          }
          for (const row of flashing) {
            row.animate([{ backgroundColor: "rgba(255, 204, 0, 0.45)" }, { backgroundColor: "transparent" }], { duration: 600, easing: "ease-out" });
          }
        };
      }

      let scheduled = false;
      function scrolled() {
        if (scheduled) return;
        scheduled = true;
        requestAnimationFrame(() => {
          scheduled = false;
          if (!covered()) pump();
        });
      }
      window.addEventListener("scroll", scrolled, { passive: true });
      window.addEventListener("resize", scrolled);
      place(null);
      connect();
      pump();
    })();

    """#
  }
}
