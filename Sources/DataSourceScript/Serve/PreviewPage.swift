/// The page `serve` sends: the HTML `show X as html` draws, and a script that keeps it in step
/// with the session by applying each batch as a table view's `performBatchUpdates` would.
///
/// A batch says which rows and sections go, come, move and reload, by index path; the cells of
/// the rows that come are drawn by the server (the presenter's templates live there), so the
/// script fetches the page of the new state (`/screen?version=N`) and takes from it the rows
/// the batch inserts or reloads, the headers, footers and placeholders. The rows that stay are
/// the same elements, moved: they slide to their new places, the new ones fade in, the deleted
/// ones fade out, the reloaded ones flash. After each batch the page's text must equal the new
/// state's; when it does not (a batch that does not fit what the page shows), the page is drawn
/// from that state whole and the console says so. `window.dshPreview` tells a test (or a
/// curious user) the state shown and how many batches fell back.
enum PreviewPage {
  /// `html` with the live script added before `</body>`.
  static func page(_ html: String, version: Int, serving: String, token: String) -> String {
    let script = "<script>\n" + script(version: version, serving: serving, token: token) + "</script>\n"
    guard let end = html.range(of: "</body>", options: .backwards) else { return html + script }
    return html.replacingCharacters(in: end.lowerBound..<end.lowerBound, with: script)
  }

  // The script is plain JavaScript of the browsers' common subset (no build step); it runs once
  // per page. A page that loses its socket connects again after a second, while the server it
  // reaches is the same serving; told that serving stopped, or refused by what now listens
  // there (another serving's token), it says so at its top and stays as it was.
  private static func script(version: Int, serving: String, token: String) -> String {
    #"""
    (() => {
      "use strict";
      let serving = "\#(serving)";
      const token = "\#(token)";
      let stopped = false;
      let shown = \#(version);
      let received = shown;
      let fallbacks = 0;
      let working = false;
      const queue = [];
      window.dshPreview = {
        get version() { return shown; },
        get received() { return received; },
        get idle() { return !working && queue.length === 0; },
        get fallbacks() { return fallbacks; },
        get stopped() { return stopped; },
      };

      // Serving stopped: the page keeps its last state and says it is no longer live.
      function stop(reason) {
        stopped = true;
        let note = document.getElementById("dsh-stopped");
        if (!note) {
          note = document.createElement("div");
          note.id = "dsh-stopped";
          Object.assign(note.style, {
            position: "fixed", top: "0", left: "0", right: "0", padding: "6px 10px", zIndex: "10",
            font: "13px -apple-system, system-ui, sans-serif", background: "#b3261e", color: "#fff",
          });
          document.body.appendChild(note);
        }
        note.textContent = reason;
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
          const response = await fetch(`/view.json?token=${token}`, { cache: "no-store" });
          if (response.status === 403 || response.headers.get("X-DSH-Serving") !== serving) {
            stop("dsh no longer serves this view here: this is its last state");
            return;
          }
        } catch (error) {
          setTimeout(reconnect, 1000);
          return;
        }
        connect();
      }

      async function pump() {
        if (working) return;
        working = true;
        try {
          while (queue.length > 0) {
            const item = queue.shift();
            if (item.layout) {
              await redraw();
              continue;
            }
            if (item.version <= shown) continue; // a redraw showed it already
            if (item.version !== shown + 1) {
              await redraw();
              continue;
            }
            const response = await fetch(`/screen?token=${token}&serving=${serving}&version=${item.version}`, { cache: "no-store" });
            if (!response.ok) {
              fallbacks += 1;
              console.warn(`dsh: state ${item.version} is no longer kept; redrawing from the current page`);
              await redraw();
              continue;
            }
            const next = parse(await response.text());
            const animate = queue.length === 0 && !document.hidden;
            const y = window.scrollY;
            if (!applyBatch(item.batch, next, animate)) {
              fallbacks += 1;
              console.warn(`dsh: a batch did not apply to what the page shows; redrawn from state ${item.version}`, item.batch);
              replaceScreen(next, false);
            }
            window.scrollTo(window.scrollX, y);
            shown = item.version;
          }
        } catch (error) {
          console.warn("dsh: could not follow the session", error);
        } finally {
          working = false;
        }
      }

      async function redraw() {
        const response = await fetch(`/?token=${token}`, { cache: "no-store" });
        const version = Number(response.headers.get("X-DSH-Version"));
        serving = response.headers.get("X-DSH-Serving") || serving;
        const y = window.scrollY;
        replaceScreen(parse(await response.text()), true);
        window.scrollTo(window.scrollX, y);
        shown = version;
      }

      function parse(html) { return new DOMParser().parseFromString(html, "text/html"); }

      // The screen of `doc` in place of the page's; `whole`: its style and appearance too.
      function replaceScreen(doc, whole) {
        if (whole) {
          const style = doc.querySelector("style");
          const mine = document.querySelector("style");
          if (style && mine) mine.textContent = style.textContent;
          document.body.className = doc.body.className;
          document.title = doc.title;
          const viewport = doc.querySelector('meta[name="viewport"]');
          const ours = document.querySelector('meta[name="viewport"]');
          if (viewport && ours) ours.setAttribute("content", viewport.getAttribute("content"));
        }
        const main = document.querySelector("main");
        const next = doc.querySelector("main");
        if (main && next) main.replaceWith(document.importNode(next, true));
      }

      function rowsOf(section) {
        const box = section.querySelector(":scope > .group, :scope > .grid");
        if (!box) return [];
        return Array.from(box.children).filter((e) => e.classList.contains("cell") || e.classList.contains("card"));
      }

      const key = (section, row) => `${section}:${row}`;

      // Applies `batch` to the page, taking new cells from `doc`; false when it does not fit.
      function applyBatch(batch, doc, animate) {
        const main = document.querySelector("main");
        const source = doc.querySelector("main");
        if (!main || !source) return false;
        const next = document.importNode(source, true);
        const expected = next.textContent;
        const oldSections = Array.from(main.querySelectorAll("section"));
        const newSections = Array.from(next.querySelectorAll("section"));

        // Which old section each new one continues (-1: inserted), as UIKit reads a batch.
        const deletedSections = new Set(batch.deletedSections);
        const insertedSections = new Set(batch.insertedSections);
        const sectionFrom = new Map(batch.movedSections.map(([from, to]) => [to, from]));
        const movedSections = new Set(batch.movedSections.map(([from]) => from));
        const stayingSections = oldSections.map((_, i) => i).filter((i) => !deletedSections.has(i) && !movedSections.has(i));
        const oldOfNew = newSections.map((_, j) =>
          insertedSections.has(j) ? -1 : sectionFrom.has(j) ? sectionFrom.get(j) : stayingSections.shift());
        if (stayingSections.length > 0 || oldOfNew.some((i) => i === undefined)) return false;

        const deletedRows = new Set(batch.deletedRows.map(([s, r]) => key(s, r)));
        const insertedRows = new Set(batch.insertedRows.map(([s, r]) => key(s, r)));
        const rowFrom = new Map(batch.movedRows.map(([from, to]) => [key(to[0], to[1]), from]));
        const movedRows = new Set(batch.movedRows.map(([from]) => key(from[0], from[1])));
        const reloadedBefore = new Set(batch.reloadedRows.map(([s, r]) => key(s, r)));
        const reloadedAfter = new Set(batch.reloadedAfterMoves.map(([s, r]) => key(s, r)));
        const oldRows = oldSections.map(rowsOf);

        const kept = []; // [the page's row, the new screen's row it stands for]
        const entering = [];
        const flashing = [];
        const taken = new Set();
        for (let j = 0; j < newSections.length; j++) {
          const i = oldOfNew[j];
          if (i < 0) {
            entering.push(newSections[j]);
            continue;
          }
          const rows = rowsOf(newSections[j]);
          const remaining = oldRows[i].map((_, r) => r).filter((r) => !deletedRows.has(key(i, r)) && !movedRows.has(key(i, r)));
          for (let k = 0; k < rows.length; k++) {
            if (insertedRows.has(key(j, k))) {
              entering.push(rows[k]);
              continue;
            }
            let from = rowFrom.get(key(j, k));
            if (from === undefined) {
              const r = remaining.shift();
              if (r === undefined) return false;
              from = [i, r];
            }
            const old = oldRows[from[0]] && oldRows[from[0]][from[1]];
            if (!old || taken.has(old)) return false;
            taken.add(old);
            if (reloadedBefore.has(key(from[0], from[1])) || reloadedAfter.has(key(j, k))) {
              flashing.push(rows[k]);
            } else {
              kept.push([old, rows[k]]);
            }
          }
          if (remaining.length > 0) return false;
        }
        const supplements = (list, selector) => list.flatMap((j) =>
          newSections[j] ? Array.from(newSections[j].querySelectorAll(`:scope > ${selector}`)) : []);
        flashing.push(...supplements(batch.reloadedHeaders, ".header"));
        flashing.push(...supplements(batch.reloadedFooters, ".footer"));
        flashing.push(...supplements(batch.reloadedPlaceholders, ".placeholder"));

        // What goes: copies fade where they stood.
        const leaving = [];
        if (animate) {
          batch.deletedSections.forEach((i) => oldSections[i] && leaving.push(oldSections[i]));
          batch.deletedRows.forEach(([s, r]) => oldRows[s] && oldRows[s][r] && leaving.push(oldRows[s][r]));
        }
        const ghosts = leaving.map((element) => {
          const rect = element.getBoundingClientRect();
          const ghost = element.cloneNode(true);
          Object.assign(ghost.style, {
            position: "absolute", left: `${rect.left + window.scrollX}px`, top: `${rect.top + window.scrollY}px`,
            width: `${rect.width}px`, height: `${rect.height}px`, margin: "0", pointerEvents: "none",
          });
          return ghost;
        });
        const before = animate ? new Map(kept.map(([old]) => [old, old.getBoundingClientRect().top])) : null;

        // The rows that stay are the same elements, in their new places.
        for (const [old, row] of kept) row.replaceWith(old);
        main.replaceWith(next);
        if (next.textContent !== expected) return false;

        if (animate) {
          for (const ghost of ghosts) {
            document.body.appendChild(ghost);
            ghost.animate([{ opacity: 1 }, { opacity: 0, transform: "translateX(-12px)" }], { duration: 250, easing: "ease-in" })
              .finished.then(() => ghost.remove(), () => ghost.remove());
          }
          for (const [old] of kept) {
            const dy = before.get(old) - old.getBoundingClientRect().top;
            if (dy !== 0) old.animate([{ transform: `translateY(${dy}px)` }, { transform: "none" }], { duration: 300, easing: "ease-out" });
          }
          for (const element of entering) {
            element.animate([{ opacity: 0, transform: "translateY(-8px)" }, { opacity: 1, transform: "none" }], { duration: 300, easing: "ease-out" });
          }
          for (const element of flashing) {
            element.animate([{ backgroundColor: "rgba(255, 204, 0, 0.45)" }, { backgroundColor: "transparent" }], { duration: 600, easing: "ease-out" });
          }
        }
        return true;
      }

      connect();
    })();

    """#
  }
}
