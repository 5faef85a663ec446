extension PreviewPage {
  /// The page script's second half: how a batch of changes is applied to the rows shown, as
  /// UIKit applies it, and the connection that brings the batches (`script(serving:token:)`
  /// is the first half, ending inside the same function).
  static let batchScript = #"""

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
