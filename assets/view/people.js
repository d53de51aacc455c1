// People as Bitbucket draws them: an avatar (a data: image bb fetched, or initials in a
// coloured circle), the display name linked to their profile, and a reviewer's status badge.
// A status is always also text for the accessibility tree, never only a tooltip.
const REVIEW_WORDS = { APPROVED: "Approved", NEEDS_WORK: "Needs work" };
const REVIEW_ORDER = { APPROVED: 0, NEEDS_WORK: 1 };
function person(users, slug) {
  const key = typeof slug === "string" ? slug : "";
  const user = users && Object.prototype.hasOwnProperty.call(users, key) && users[key] && typeof users[key] === "object" ? users[key] : {};
  const name = typeof user.name === "string" && user.name ? user.name : key || "Unknown user";
  return { slug: key, name, avatar: user.avatar, initials: user.initials, service: user.service === true, url: user.url };
}
function initialsOf(p) {
  if (typeof p.initials === "string" && p.initials.trim()) return Array.from(p.initials.trim()).slice(0, 2).join("");
  const words = p.name.split(/\s+/).filter(Boolean);
  return words.slice(0, 2).map((w) => Array.from(w)[0]).join("").toUpperCase() || "?";
}
function hue(text) {
  let h = 0;
  for (const ch of text) h = (h * 31 + ch.codePointAt(0)) >>> 0;
  return h % 8;
}
// Text only a screen reader reads.
function sr(...text) { return el("span", { class: "bb-sr" }, ...text); }
// "Bob Builder: Approved", or just the name for a reviewer who has not reviewed yet.
function reviewLabel(p, status) { return REVIEW_WORDS[status] ? `${p.name}: ${REVIEW_WORDS[status]}` : p.name; }
// Only a data: image is ever drawn; anything else becomes initials, so no image is fetched.
// `said` adds the name and status as text for the accessibility tree (where no name is drawn beside it).
function avatar(p, size = "md", status, said = false) {
  const src = typeof p.avatar === "string" && /^data:image\/[a-z0-9.+-]+[;,]/i.test(p.avatar) ? p.avatar : null;
  const face = src
    ? el("img", { class: "bb-face", src, alt: "" })
    : el("span", { class: `bb-face bb-initials bb-c${hue(p.slug || p.name)}`, "aria-hidden": "true" }, initialsOf(p));
  const badge = REVIEW_WORDS[status]
    ? el("span", { class: `bb-badge bb-${status === "APPROVED" ? "approved" : "needs-work"}`, "aria-hidden": "true" }, status === "APPROVED" ? "✓" : "!")
    : null;
  return el("span", { class: `bb-avatar bb-${size}`, title: reviewLabel(p, status).slice(0, 300) }, face, badge, said ? sr(reviewLabel(p, status)) : null);
}
// The display name, linked to the person's profile in Bitbucket where bb knows it.
function nameOf(p) {
  return link(p.url, { class: "bb-name", title: p.url ? `${p.name.slice(0, 200)}: profile in Bitbucket` : null },
    el("bdi", {}, p.name), p.service ? el("span", { class: "bb-muted" }, " (service)") : null);
}
// Approved, then Needs work, then the rest; ties by display name, as Bitbucket orders them.
function sortReviewers(reviewers, users) {
  const list = (Array.isArray(reviewers) ? reviewers : []).filter((r) => r && typeof r === "object");
  const rank = (r) => (r.status in REVIEW_ORDER ? REVIEW_ORDER[r.status] : 2);
  return list
    .map((r) => ({ r, p: person(users, r.user) }))
    .sort((a, b) => rank(a.r) - rank(b.r) || a.p.name.localeCompare(b.p.name))
    .map(({ r, p }) => ({ status: r.status, person: p, reviewed: r.reviewed === true }));
}
// The state lozenge: Open, Merged, Declined, or Draft for an open draft.
function stateLozenge(item) {
  const state = typeof item.state === "string" ? item.state : "";
  if (state === "OPEN" && item.draft === true) return el("span", { class: "bb-loz bb-draft" }, "Draft");
  const words = { OPEN: ["Open", "bb-open"], MERGED: ["Merged", "bb-merged"], DECLINED: ["Declined", "bb-declined"] };
  const [word, cls] = words[state] || [state.slice(0, 20) || "Unknown", "bb-plain"];
  return el("span", { class: `bb-loz ${cls}` }, word);
}
// Source → target, each linked to its branch in Bitbucket, each announcing its role.
function branches(source, target) {
  const s = source && typeof source === "object" ? source : {};
  const t = target && typeof target === "object" ? target : {};
  const fork = typeof s.repo === "string" && typeof t.repo === "string" && s.repo !== t.repo;
  // A pull request's ends are branches; a compare's may be a tag, a commit or a short name (`ref`).
  const WORDS = { branch: "branch", tag: "tag", commit: "commit", ref: "ref" };
  const chip = (b, role, withRepo) => {
    const name = typeof b.branch === "string" ? b.branch : "?";
    const label = withRepo ? `${b.repo}:${name}` : name;
    const what = Object.hasOwn(WORDS, b.ref) ? WORDS[b.ref] : "branch";
    return link(b.url, { class: "bb-branch", "data-role": role, title: `${role} ${what}: ${label}`.slice(0, 600) }, sr(`${role} ${what}: `), el("bdi", {}, label));
  };
  return el("span", { class: "bb-branches" }, chip(s, "source", fork), el("span", { class: "bb-arrow", "aria-hidden": "true" }, "→"), chip(t, "target", fork));
}
