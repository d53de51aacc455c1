// Times and counts as Bitbucket words them: "2 minutes ago", "1 comment", "3 open tasks".
const fmt = (() => {
  let locale;
  let timeZone;
  function setPlace(context) {
    if (typeof context.locale === "string") locale = context.locale;
    if (typeof context.timeZone === "string") timeZone = context.timeZone;
  }
  const isTime = (ms) => typeof ms === "number" && Number.isFinite(ms) && ms > 0;
  function date(ms) {
    if (!isTime(ms)) return "";
    const options = { dateStyle: "medium", timeStyle: "short", timeZone };
    try { return new Date(ms).toLocaleString(locale, options); } catch { return new Date(ms).toLocaleString(); }
  }
  // A day without its time ("Nov 24, 2025"), where a column has room for a date and no more (blame).
  function day(ms) {
    if (!isTime(ms)) return "";
    try { return new Date(ms).toLocaleDateString(locale, { dateStyle: "medium", timeZone }); } catch { return new Date(ms).toLocaleDateString(); }
  }
  function ago(ms, now = Date.now(), short = false) {
    if (!isTime(ms)) return "";
    const seconds = Math.round((now - ms) / 1000);
    if (seconds < 45) return "just now";
    const minutes = Math.round(seconds / 60);
    if (minutes < 60) return minutes === 1 ? "a minute ago" : `${minutes} minutes ago`;
    const hours = Math.round(minutes / 60);
    if (hours < 24) return hours === 1 ? "an hour ago" : `${hours} hours ago`;
    const days = Math.round(hours / 24);
    if (days < 2) return "yesterday";
    if (days < 30) return `${days} days ago`;
    return short ? day(ms) : date(ms);
  }
  const isCount = (n) => typeof n === "number" && Number.isFinite(n) && n >= 0;
  function num(n) {
    try { return n.toLocaleString(locale); } catch { return String(n); }
  }
  function count(n, one, many) { return `${num(n)} ${n === 1 ? one : many}`; }
  function duration(ms) {
    if (!isCount(ms)) return "";
    const s = Math.round(ms / 1000);
    if (s < 60) return `${s} s`;
    const m = Math.floor(s / 60);
    if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
    return `${Math.floor(m / 60)} h ${m % 60} min`;
  }
  // `short`: past a month the day alone, the whole date and time in the title.
  function time(ms, prefix = "", short = false) {
    if (!isTime(ms)) return null;
    return el("time", { class: "bb-time", title: date(ms), datetime: new Date(ms).toISOString(), "data-at": ms, "data-prefix": prefix, "data-short": short ? "" : null },
      prefix + ago(ms, Date.now(), short));
  }
  function tick(root) {
    for (const node of root.querySelectorAll("time[data-at]")) {
      node.textContent = (node.dataset.prefix || "") + ago(Number(node.dataset.at), Date.now(), node.hasAttribute("data-short"));
    }
  }
  return { setPlace, date, ago, num, count, duration, time, tick, isCount };
})();
