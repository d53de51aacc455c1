// What the view puts in the model's context with ui/update-model-context (MCP Apps 2026-01-26; the host gives
// the latest to the model on its next turn, and each update replaces the last): so ONE message holds all of
// it — the last change told (changes.js) and the lines the person has selected (point.js), each a part set or
// cleared by its key. Sent only where the host offers `updateModelContext`; never more than one in flight: a
// state that changes meanwhile goes, as it is then, once the one in flight is answered.
const modelContext = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const parts = new Map(); // key → { text, structured }, in the order first set
  const s = { flying: false, again: false, sent: 0 };
  function send() {
    if (page.gone || !obj(page.caps).updateModelContext) return;
    if (s.flying) { s.again = true; return; }
    s.flying = true;
    s.again = false;
    const content = [...parts.values()].map((p) => ({ type: "text", text: p.text }));
    const structured = {};
    for (const [key, p] of parts) if (p.structured) structured[key] = p.structured;
    const params = Object.keys(structured).length ? { content, structuredContent: structured } : { content };
    s.sent++;
    const done = () => { s.flying = false; if (s.again && !page.gone) send(); };
    bridge.request("ui/update-model-context", params).then(done, done);
  }
  // Sets `key`'s part (`text` null: clears it) and sends the whole context if it changed, or always for an event
  // (`again`: a change told twice is told twice).
  function set(key, text, structured = null, again = false) {
    const had = parts.get(key);
    if (!text) { if (!had) return; parts.delete(key); }
    else if (had && had.text === text && !again) return;
    else parts.set(key, { text, structured });
    send();
  }
  return { set, flying: () => s.flying };
})();
