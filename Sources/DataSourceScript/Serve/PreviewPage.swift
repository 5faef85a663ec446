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

    """#
      + batchScript
  }
}
