// The pull request form (kind pull_request_form): Bitbucket's "Create pull request" page filled with
// the model's draft. The person edits it; suggest_form_values answers as they type (debounced); Create
// calls create_pull_request through the host, and nothing is created before. What the person wrote is
// kept in `state` across redraws and failures; the form is never read again by itself (refresh.js).
// After creation the new pull request's card opens in place and the model is told.
const prForm = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const arr = (x) => (Array.isArray(x) ? x : []);
  const str = (x) => (typeof x === "string" ? x : "");
  let state = null;
  const timers = {};
  const later = (key, ms, fn) => { clearTimeout(timers[key]); timers[key] = setTimeout(fn, ms); };

  function init(data) {
    const f = obj(data.form);
    const defaults = arr(f.defaultReviewers).map(obj).filter((r) => str(r.slug));
    const names = {};
    for (const r of defaults) names[r.slug] = r;
    const given = arr(f.reviewers).filter((r) => typeof r === "string" && r);
    // Code owners (.bitbucket/CODEOWNERS on the target): added as Bitbucket adds them, each saying why.
    const owners = arr(f.codeOwners).map(obj).filter((r) => str(r.slug));
    for (const r of owners) if (!names[r.slug]) names[r.slug] = r;
    return {
      call: data.call, project: str(f.project), repo: str(f.repo), from: str(f.from), to: str(f.to),
      title: str(f.title) || str(f.suggestedTitle), titleTouched: Boolean(str(f.title)), description: str(f.description),
      draft: f.draft === true, reviewers: [...new Set([...given, ...defaults.map((r) => r.slug), ...owners.map((r) => r.slug)])],
      defaults: new Set(defaults.map((r) => r.slug)), owners: new Map(owners.map((r) => [r.slug, str(r.why)])), names, commits: f.commits, files: f.files, existing: f.existing,
      preview: null, tab: "write", busy: false, problem: null, options: {}, who: "",
      // A field bb found wrong (a source branch that does not exist): marked, its words said once, under it.
      invalid: str(obj(f.invalid).field) || null, fieldError: str(obj(f.invalid).message) || null,
    };
  }

  // suggest_form_values through the host; its answer's structuredContent, or null.
  function ask(want, more) {
    const args = Object.assign({ project: state.project, repo: state.repo, want }, more);
    return bridge.request("tools/call", { name: "suggest_form_values", arguments: args })
      .then((r) => (r && !r.isError ? obj(r.structuredContent) : null), () => null);
  }
  // Draws again with the focus and caret where the person left them (a suggestion can land mid-word).
  function paint() {
    const a = document.activeElement;
    const id = a && a.id;
    const at = a && "selectionStart" in a ? [a.selectionStart, a.selectionEnd] : null;
    redraw();
    const b = id && document.getElementById(id);
    if (b) { b.focus({ preventScroll: true }); if (at && b.setSelectionRange) try { b.setSelectionRange(...at); } catch { /* not a text box */ } }
  }
  const redrawn = () => { if (!page.gone && page.data && page.data.kind === "pull_request_form") paint(); };

  // The branches changed: the default reviewers, commits, files and title follow, as on Bitbucket's page.
  function pairChanged() {
    later("pair", 400, () => {
      if (!state.from || !state.to) return;
      const pair = { from_ref: state.from, to_ref: state.to };
      const s = state;
      Promise.all([ask("commits", pair), ask("reviewers", pair)]).then(([c, r]) => {
        if (s !== state) return;
        if (c) {
          Object.assign(state, { commits: c.commits, files: c.files, existing: c.existing });
          if (!state.titleTouched && str(c.title)) state.title = c.title;
        }
        if (r) {
          const slugs = arr(r.reviewers).map(obj).filter((x) => str(x.slug));
          state.reviewers = state.reviewers.filter((x) => !state.defaults.has(x));
          state.defaults = new Set(slugs.map((x) => x.slug));
          for (const x of slugs) { state.names[x.slug] = x; if (!state.reviewers.includes(x.slug)) state.reviewers.push(x.slug); }
          // The pair's code owners replace the last pair's, as its default reviewers do.
          const owners = arr(r.owners).map(obj).filter((x) => str(x.slug));
          state.reviewers = state.reviewers.filter((x) => !state.owners.has(x) || state.defaults.has(x));
          state.owners = new Map(owners.map((x) => [x.slug, str(x.why)]));
          for (const x of owners) { if (!state.names[x.slug]) state.names[x.slug] = x; if (!state.reviewers.includes(x.slug)) state.reviewers.push(x.slug); }
        }
        redrawn();
      });
    });
  }

  // A text box with suggestions as the person types: `want` names what suggest_form_values lists.
  // Its options and (for the reviewer box) its text live in `state`, so a redraw keeps them.
  function suggesting(id, want, value, label, onvalue, pick) {
    const options = () => arr(state.options[id]).map((x) => el("option", { value: want === "branches" ? str(x.name) : str(x.slug), label: want === "people" ? str(x.name) : null }));
    const list = el("datalist", { id: `${id}-list` }, options());
    const input = el("input", { id, class: "bb-input", value, list: `${id}-list`, autocomplete: "off", "aria-label": label, "aria-invalid": state.invalid && id === `bb-f-${state.invalid}` ? "true" : null,
      // The field's own error, said under it (end()), is its description.
      "aria-describedby": state.invalid && id === `bb-f-${state.invalid}` && state.fieldError ? `${id}-error` : null,
      oninput: () => {
        onvalue(input.value);
        const text = input.value.trim();
        later(id, 250, () => ask(want, { text }).then((a) => {
          if (!a || !state) return;
          state.options[id] = arr(a[want]).map(obj);
          for (const x of state.options[id]) if (want === "people" && str(x.slug)) state.names[x.slug] = x;
          const now = document.getElementById(`${id}-list`);
          if (now) now.replaceChildren(...options());
        }));
      },
      // A suggestion chosen, or Enter: a name typed in full is taken as it is.
      onchange: () => pick && arr(state.options[id]).some((x) => x.slug === input.value.trim()) && pick(input),
      onkeydown: (e) => { if (pick && e.key === "Enter") { e.preventDefault(); pick(input); } } });
    return [input, list];
  }

  function end(word, key) {
    const [input, list] = suggesting(`bb-f-${key}`, "branches", state[key], `${word} branch`, (v) => {
      state[key] = v.trim();
      // Another branch chosen: the mark and its words go, as on Bitbucket's form.
      if (state.invalid === key) { state.invalid = null; state.fieldError = null; input.removeAttribute("aria-invalid"); input.removeAttribute("aria-describedby"); document.getElementById(`bb-f-${key}-error`)?.remove(); }
      pairChanged();
    });
    const error = state.invalid === key && state.fieldError ? el("p", { class: "bb-f-error", id: `bb-f-${key}-error` }, state.fieldError) : null;
    return el("div", { class: "bb-f-end" }, el("span", { class: "bb-f-label" }, word, el("span", { class: "bb-f-repo" }, ` · ${state.project}/${state.repo}`)), input, list, error);
  }

  function reviewers(data, users) {
    const chips = state.reviewers.map((slug) => {
      const p = person(Object.assign({}, state.names, users), slug);
      return el("li", { class: "bb-f-chip" }, avatar(p, "sm"), el("bdi", {}, p.name),
        state.defaults.has(slug) ? el("span", { class: "bb-loz bb-plain", title: "Default reviewer for these branches" }, "Default") : null,
        state.owners.has(slug) ? [el("span", { class: "bb-loz bb-plain bb-f-owner", title: "Code owner of files these branches change" }, "Code owner"),
          state.owners.get(slug) ? el("bdi", { class: "bb-muted bb-f-why" }, state.owners.get(slug).slice(0, 300)) : null] : null,
        el("button", { type: "button", class: "bb-link-button", "aria-label": `Remove ${p.name}`,
          onclick: () => { state.reviewers = state.reviewers.filter((x) => x !== slug); paint(); } }, "×"));
    });
    const [input, list] = suggesting("bb-f-people", "people", state.who, "Add a reviewer", (v) => { state.who = v; }, (box) => {
      const slug = box.value.trim();
      state.who = "";
      if (slug && !state.reviewers.includes(slug)) state.reviewers.push(slug);
      paint();
    });
    input.placeholder = "Add a reviewer";
    return el("div", { class: "bb-f-chips" }, el("ul", {}, chips), input, list);
  }

  function description() {
    const tab = (name, word) => el("button", { type: "button", class: "bb-tab", "aria-current": state.tab === name ? "page" : null,
      onclick: () => { state.tab = name; if (name === "preview") preview(); paint(); } }, word);
    const body = state.tab === "write"
      ? el("textarea", { id: "bb-f-desc", class: "bb-input bb-f-desc", rows: isInline() ? "3" : "8", "aria-label": "Description",
        oninput: (e) => { state.description = e.target.value; } })
      : el("div", { class: "bb-f-preview" }, state.preview ? markdown.draw(state.preview) : el("p", { class: "bb-muted" }, state.description.trim() ? "Loading preview…" : "Nothing to preview"));
    if (body.tagName === "TEXTAREA") body.value = state.description;
    return [el("nav", { class: "bb-tabs" }, tab("write", "Write"), tab("preview", "Preview")), body];
  }
  function preview() {
    const text = state.description;
    state.preview = null;
    if (text.trim()) ask("preview", { text }).then((a) => { if (a && state.description === text) { state.preview = a.preview; redrawn(); } });
  }

  // Create: create_pull_request through the host, with what the form holds.
  function submit(data) {
    if (state.busy) return;
    const args = { project: state.project, repo: state.repo, title: state.title.trim(), from_ref: state.from, default_reviewers: false };
    if (state.to) args.to_ref = state.to;
    if (state.description.trim()) args.description = state.description;
    if (state.reviewers.length) args.reviewers = state.reviewers;
    if (state.draft) args.draft = true;
    // The empty field named and marked, as Bitbucket's form marks it.
    const empty = !args.from_ref ? ["from", "Choose a source branch."] : !args.title ? ["title", "The title cannot be empty."] : null;
    state.invalid = empty && empty[0];
    if (empty) { state.problem = { text: empty[1] }; paint(); document.getElementById(`bb-f-${empty[0]}`)?.focus(); return; }
    state.busy = true;
    state.problem = null;
    paint();
    const s = state;
    bridge.request("tools/call", { name: "create_pull_request", arguments: args }).then((r) => {
      s.busy = false;
      const text = resultText(r);
      const made = /^Created PR #(\d+) in /.exec(text);
      if (r && !r.isError && made) {
        changes.tell(`The person created PR #${made[1]} in ${s.project}/${s.repo} from the form.`);
        if (actions.offers(data, "refresh_view") && KINDS.has("pull_request")) {
          open({ kind: "pull_request", project: s.project, repo: s.repo, pr_id: Number(made[1]) });
        } else { s.problem = { text, done: true }; redrawn(); }
        return;
      }
      s.problem = { text: text || "It did not work, and bb said nothing about why." };
      redrawn();
    }, (err) => { s.busy = false; s.problem = { text: String(obj(err).message || "The host did not pass the call on.") }; redrawn(); });
  }

  // The new pull request's card, in place of the form.
  function open(call) {
    bridge.request("tools/call", { name: "refresh_view", arguments: { show: call } }).then((result) => {
      const fresh = viewData(result);
      if (page.gone || !fresh || result.isError) return;
      state = null;
      page.result = result;
      page.data = fresh;
      render();
      refresh.start(fresh);
    }, () => {});
  }

  // bb's words for what went wrong; for a pull request already open, a link to it.
  function problem(data) {
    const p = state.problem;
    if (!p) return null;
    // Created (where the card cannot open in place): Bitbucket's words, its link, and Done, which asks the host to
    // close the form (MCP Apps draft ui/notifications/request-teardown, sent from a Done button as the spec's example
    // does; a host that does not know it ignores a notification, and one that does answers with ui/resource-teardown).
    const made = p.done ? /^Created PR #(\d+) /.exec(p.text) : null;
    if (made) {
      const home = str(obj(data.server).url).replace(/\/+$/, "");
      const url = home ? `${home}/projects/${encodeURIComponent(state.project)}/repos/${encodeURIComponent(state.repo)}/pull-requests/${made[1]}` : null;
      return el("div", { class: "bb-f-done", role: "status" }, el("p", {}, `Pull request #${made[1]} created. `, url ? link(url, { class: "bb-link bb-f-web" }, "Open it in Bitbucket") : null),
        el("p", {}, el("button", { type: "button", class: "bb-button bb-f-doneclose", onclick: () => bridge.notify("ui/notifications/request-teardown", {}) }, "Done")));
    }
    const dup = /already open: #(\d+)/.exec(p.text);
    const base = str(obj(data.server).url).replace(/\/+$/, "");
    const at = dup && base ? `${base}/projects/${encodeURIComponent(state.project)}/repos/${encodeURIComponent(state.repo)}/pull-requests/${dup[1]}` : null;
    // Bitbucket's own words where bb quotes them; else bb's sentence without what it tells the model.
    const quoted = /\(Bitbucket: "(.+)"\)/.exec(p.text);
    const words = quoted ? quoted[1] : p.text.replace(/^Bitbucket refused[^:]*: /, "").replace(/; use it \(get_pull_request[^)]*\) instead of creating another\.?/, ".");
    return el("div", { class: p.done ? "bb-f-done" : "bb-f-problem", role: "alert" }, el("p", { dir: "auto" }, linked(words.slice(0, 2000))),
      dup ? el("p", {}, KINDS.has("pull_request") && actions.offers(data, "refresh_view")
        ? el("button", { type: "button", class: "bb-link-button bb-f-open", onclick: () => open({ kind: "pull_request", project: state.project, repo: state.repo, pr_id: Number(dup[1]) }) }, `Open pull request #${dup[1]}`)
        : null, at ? link(at, { class: "bb-link bb-f-web" }, " · in Bitbucket") : null) : null);
  }

  function commitsAndFiles(ctx) {
    const c = obj(state.commits);
    const f = obj(state.files);
    if (!Array.isArray(c.items)) return null;
    const commit = (x) => el("li", { class: "bb-f-commit" }, el("code", { class: "bb-hash" }, str(x.short)),
      el("bdi", { class: "bb-f-msg" }, str(x.message)), el("span", { class: "bb-muted" }, str(x.author)));
    const file = (x) => el("li", { class: `bb-f-file bb-ch-${str(x.type).toLowerCase()}` }, el("bdi", {}, str(x.path)));
    const more = (o, noun) => (o.more ? el("p", { class: "bb-muted" }, `More ${noun} exist than shown`) : null);
    return el("section", { class: "bb-section bb-f-changes" },
      el("h3", {}, "Commits"), c.items.length ? grow(c.items.map(obj), { inline: ctx.inline, first: 5, step: 10, draw: commit, noun: "commits", tag: "ul", cls: "bb-f-list" })
        : el("p", { class: "bb-muted" }, "There are no changes between these branches."), more(c, "commits"),
      Array.isArray(f.items) && f.items.length ? [el("h3", {}, "Files"), grow(f.items.map(obj), { inline: ctx.inline, first: 5, step: 20, draw: file, noun: "files", tag: "ul", cls: "bb-f-list" }), more(f, "files")] : null);
  }

  function draw(data, ctx) {
    if (!state || state.call !== data.call) state = init(data);
    const label = (forId, word) => el("label", { class: "bb-f-label", for: forId }, word);
    const title = el("input", { id: "bb-f-title", class: "bb-input", value: state.title, "aria-invalid": state.invalid === "title" ? "true" : null,
      oninput: (e) => { state.title = e.target.value; state.titleTouched = true; } });
    const draft = el("input", { type: "checkbox", id: "bb-f-draft", checked: state.draft ? "" : null, disabled: state.busy || (state.problem && state.problem.done) ? "" : null, onchange: (e) => { state.draft = e.target.checked; } });
    // A pull request already open between the branches is said as soon as both are chosen, and Create waits.
    const dup = obj(state.existing);
    const open1 = Number.isInteger(dup.id) ? dup : null;
    const create = el("button", { type: "button", class: "bb-button bb-primary bb-f-create", disabled: state.busy || open1 || (state.problem && state.problem.done) ? "" : null, "aria-busy": state.busy ? "true" : null,
      onclick: () => submit(data) }, state.busy ? "Creating…" : "Create");
    // Created (on the path where the card cannot open in place) or creating: what was sent stays as it was sent, read
    // only, as Bitbucket's page leaves the form once it has created the pull request.
    const locked = state.busy || Boolean(state.problem && state.problem.done);
    return el("div", { class: "bb-form" },
      el("h2", { class: "bb-title" }, "Create pull request"),
      el("fieldset", { class: "bb-f-fields", disabled: locked ? "" : null },
        el("div", { class: "bb-f-ends" }, end("Source", "from"), el("span", { class: "bb-arrow", "aria-hidden": "true" }, "→"), end("Destination", "to")),
        label("bb-f-title", "Title"), title,
        el("div", { class: "bb-f-label" }, "Description"), description(),
        label("bb-f-people", "Reviewers"), reviewers(data, ctx.users)),
      problem(data),
      open1 ? el("div", { class: "bb-f-problem bb-f-exists", role: "status" }, el("p", { dir: "auto" }, `A pull request from these branches is already open: #${open1.id} `, el("bdi", {}, str(open1.title).slice(0, 300))),
        KINDS.has("pull_request") && actions.offers(data, "refresh_view") ? el("p", {}, el("button", { type: "button", class: "bb-link-button bb-f-open",
          onclick: () => open({ kind: "pull_request", project: state.project, repo: state.repo, pr_id: open1.id }) }, `Open pull request #${open1.id}`)) : null) : null,
      el("div", { class: "bb-f-buttons" }, el("label", { class: "bb-f-check" }, draft, " Create as draft"), create),
      commitsAndFiles(ctx));
  }

  return { draw };
})();
registerKind("pull_request_form", prForm.draw);
