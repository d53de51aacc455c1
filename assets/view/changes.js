// What changed in a view, in one line for the model (ui/update-model-context): builds, reviewers,
// new comments, the pull request's state, else "PR #12 changed".
const changes = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const arr = (x) => (Array.isArray(x) ? x.filter((i) => i && typeof i === "object") : []);
  const BUILD = { SUCCESSFUL: "passed", FAILED: "failed", INPROGRESS: "started", CANCELLED: "was cancelled", UNKNOWN: "is in an unknown state" };
  const STATE = { MERGED: "was merged", DECLINED: "was declined", OPEN: "was reopened" };

  function comments(pr) {
    const out = new Map();
    const stack = arr(obj(pr.activity).items).map((i) => obj(i.comment));
    for (let guard = 0; stack.length && guard < 100000; guard++) {
      const c = stack.pop();
      if (Number.isInteger(c.id)) out.set(c.id, c.author);
      stack.push(...arr(c.replies));
    }
    return out;
  }

  function card(o, n, users) {
    const pr = `PR #${n.id}`;
    const name = (slug) => person(users, slug).name;
    const out = [];
    if (o.state !== n.state) out.push(`${pr} ${STATE[n.state] || "changed state"}`);
    const was = new Map(arr(obj(o.builds).items).map((b) => [b.key, b.state]));
    for (const b of arr(obj(n.builds).items)) {
      if (was.get(b.key) !== b.state) out.push(`Build ${String(b.key).slice(0, 100)} on ${pr} ${BUILD[b.state] || "changed"}`);
    }
    const had = new Map(arr(o.reviewers).map((r) => [r.user, r.status]));
    for (const r of arr(n.reviewers)) {
      if (had.get(r.user) === r.status) continue;
      out.push(`${name(r.user)} ${r.status === "APPROVED" ? "approved" : r.status === "NEEDS_WORK" ? "marked it as needing work"
        : had.has(r.user) ? "marked it as unapproved" : "was added as a reviewer"}`);
    }
    const before = comments(o);
    const authors = new Set([...comments(n)].filter(([id]) => !before.has(id)).map(([, a]) => a));
    for (const a of authors) out.push(`${name(a)} commented`);
    return out.length ? out.join("; ") : `${pr} changed`;
  }

  function describe(old, neu) {
    if (neu.kind === "pull_request" && old.kind === "pull_request") return card(obj(old.pullRequest), obj(neu.pullRequest), obj(neu.users));
    if (neu.kind === "diff") return `The diff of PR #${obj(neu.diff).id} changed`;
    if (neu.kind === "file") return `${String(obj(neu.file).path).slice(0, 300)} at ${String(obj(neu.file).atLabel || "the default branch").slice(0, 200)} changed`;
    if (neu.kind === "compare") return `The diff of ${obj(obj(neu.diff).compare).from} against ${obj(obj(neu.diff).compare).to} changed`;
    return `${String(obj(neu.list).title || "The list of pull requests").slice(0, 200)} changed`;
  }

  function tell(text) {
    if (!text || page.gone || !obj(page.caps).updateModelContext) return;
    bridge.request("ui/update-model-context", { content: [{ type: "text", text }] }).catch(() => {});
  }
  return { describe, tell };
})();
