// A view keeps itself current while on screen (ADR-101): `next` ms after the last answer it asks
// refresh_view about the view on top; never off screen, after teardown, for a form, or twice at once.
// Changed data is drawn in place (main.js redraw), but a changed diff is only offered.
const refresh = (() => {
  const FLOOR_MS = 500; // never sooner, whatever an answer says
  const ERROR_MS = 60000; // after an error whose answer names no `next`
  const DIFFS = new Set(["diff", "compare", "file"]); // kinds whose change is offered rather than drawn in place
  const s = { epoch: 0, timer: null, due: null, asking: false, seen: false, io: null, call: null, fingerprint: null, offer: null, held: null };
  const note = el("span", { class: "bb-live", role: "status", hidden: "" });
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});

  function say(words, bad) {
    note.replaceChildren(...[words].flat().filter(Boolean));
    note.hidden = !words;
    note.classList.toggle("bb-live-bad", Boolean(bad));
  }
  const onScreen = () => s.seen && document.visibilityState === "visible" && innerWidth > 0 && innerHeight > 0;
  function arm() {
    clearTimeout(s.timer);
    s.timer = null;
    if (!page.gone && s.due !== null && onScreen()) s.timer = setTimeout(ask, Math.max(0, s.due - Date.now()));
  }
  function after(ms) {
    s.due = typeof ms === "number" && Number.isFinite(ms) ? Date.now() + Math.max(FLOOR_MS, ms) : null;
    arm();
  }
  function watch() {
    if (s.io || typeof IntersectionObserver !== "function") return;
    s.io = new IntersectionObserver((entries) => { s.seen = entries[entries.length - 1].isIntersecting; arm(); });
    s.io.observe(root);
    document.addEventListener("visibilitychange", arm);
    addEventListener("resize", arm);
  }

  // `data` just drawn on top: asked about `next` ms from now, or at `due` (a view brought back).
  function start(data, due) {
    s.epoch++;
    s.asking = false;
    s.offer = s.held = null;
    s.due = null;
    say(null);
    changes.show(null);
    const tools = obj(obj(data).server).tools;
    if (data && data.kind !== "pull_request_form" && Array.isArray(tools) && tools.includes("refresh_view") && obj(data.call).kind) {
      watch();
      s.call = data.call;
      s.fingerprint = data.fingerprint;
      if (due !== undefined) { s.due = due; arm(); } else after(data.next);
    } else arm();
  }
  function stop() {
    s.epoch++;
    s.due = null;
    arm();
    if (s.io) s.io.disconnect();
  }

  function ask() {
    s.timer = null;
    if (page.gone || s.asking || !onScreen()) return;
    const epoch = s.epoch;
    s.asking = true;
    s.due = null;
    const args = { show: s.call };
    if (typeof s.fingerprint === "string") args.fingerprint = s.fingerprint;
    bridge.request("tools/call", { name: "refresh_view", arguments: args }).then((r) => answer(obj(r), epoch),
      (err) => answer({ isError: true, content: [{ type: "text", text: String(obj(err).message || "The host did not answer.") }] }, epoch));
  }

  function answer(result, epoch) {
    if (page.gone || epoch !== s.epoch) return;
    s.asking = false;
    const m = obj(obj(result._meta)["bb/view"]);
    if (result.isError) {
      say(`Could not update: ${firstSentence(resultText(result))}`, true);
      after("next" in m ? m.next : ERROR_MS);
      return;
    }
    if (typeof m.fingerprint === "string") s.fingerprint = m.fingerprint;
    if (m.unchanged === true) {
      if (!s.offer) {
        say(null);
        Object.assign(page.data, { fingerprint: s.fingerprint, next: m.next });
        if (typeof m.readAt === "number") {
          page.data.readAt = m.readAt;
          const read = root.querySelector(".bb-read");
          if (read) read.replaceChildren(fmt.time(m.readAt, "Read from Bitbucket ") || "");
        }
      }
      after(m.next);
      return;
    }
    const data = viewData(result);
    if (!data) {
      say("Could not update: bb's answer holds no view.", true);
      after(ERROR_MS);
      return;
    }
    // Only the classes that came later (the same text): drawn in place, nothing offered or told.
    // A file's lines within the answer's window: those Show more appended below it, or Show earlier above, are not
    // the answer's.
    const { start, end } = obj(data.file);
    const text = (d) => JSON.stringify(d.kind === "file" ? [obj(d.file).path, obj(d.file).at, (obj(d.file).lines || []).filter((l) => l && l.n >= start && l.n <= end)] : d.diff,
      (k, v) => (k === "r" || k === "p" ? undefined : v));
    // A diff (a pull request's or two refs') or a file that changed is offered, never swapped under the person's reading.
    const diffs = DIFFS.has(data.kind) && data.kind === page.data.kind;
    // The same text: drawn in place, unless that would take away lines the person appended.
    if (diffs && text(data) === text(page.data)) { if (data.kind !== "file" || (obj(page.data.file).end === end && obj(page.data.file).start === start)) swap(result, data); }
    else if (diffs) {
      // Named as the card names a change (who commented, on which file), with Show going there.
      const change = changes.describe(page.data, data);
      const named = change.parts.some((p) => p[1]);
      s.offer = { result, data, change };
      say(named ? [`New: ${change.parts.map((p) => p[0]).join(" · ")} `, el("button", { type: "button", class: "bb-button bb-offer", onclick: take }, "Show")]
        : [data.kind === "file" ? "This file has changed " : "This diff has changed ", el("button", { type: "button", class: "bb-button bb-offer", onclick: take }, "Show the new version")]);
    } else if (document.activeElement && root.contains(document.activeElement) && document.activeElement.isContentEditable) {
      // Not under the person's caret: drawn once focus leaves the view.
      if (!s.held) root.addEventListener("focusout", release);
      s.held = { result, data, epoch };
    } else {
      say(null);
      told(swap(result, data));
    }
    after(data.next);
  }
  // A change drawn in place is told to the model and shown to the person, in the same words.
  function told(change) {
    changes.tell(change.text);
    changes.show(change);
  }
  function swap(result, data) {
    const line = changes.describe(page.data, data);
    page.result = result;
    page.data = data;
    redraw();
    return line;
  }
  function release(e) {
    if (e.relatedTarget && root.contains(e.relatedTarget)) return;
    root.removeEventListener("focusout", release);
    setTimeout(() => {
      const h = s.held;
      s.held = null;
      if (h && h.epoch === s.epoch && !page.gone) told(swap(h.result, h.data));
    }, 0);
  }
  function take() {
    const o = s.offer;
    if (!o || page.gone) return;
    s.offer = null;
    say(null);
    // The file of the first new comment is the one full screen opens on, and the view goes to the comment.
    const file = (o.change.parts.find((p) => p[2]) || [])[2];
    if (file && typeof diffView === "object" && diffView.open) diffView.open(o.data, file);
    const change = swap(o.result, o.data);
    changes.tell(change.text);
    setTimeout(() => { if (!page.gone && !changes.goTo(change)) changes.show(change); }, 0);
  }
  return { start, stop, say, note, due: () => s.due };
})();
