// Saving what a view shows (issue 41): a pull request's patch from its diff view, a file at its ref from the
// source view. bb reads it (download_file, a view companion) and the page hands it to the host with the MCP
// Apps draft's ui/download-file as an embedded resource, the host naming the file from its uri. Offered only
// where the host lists `downloadFile` among its capabilities and bb offers download_file.
const save = (() => {
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});
  const str = (x) => (typeof x === "string" ? x : "");
  function offered() {
    const tools = obj(obj(page.data).server).tools;
    return Boolean(obj(page.caps).downloadFile) && Array.isArray(tools) && tools.includes("download_file");
  }
  // A button that saves what `args` name (download_file's arguments), and the line that says how it went.
  function button(args, label) {
    if (!offered()) return null;
    const said = el("span", { class: "bb-muted bb-save-said", role: "status" });
    const b = el("button", { type: "button", class: "bb-link-button bb-save" }, label);
    b.addEventListener("click", () => {
      if (b.disabled || page.gone) return;
      b.disabled = true;
      b.ariaBusy = "true";
      said.textContent = "";
      const done = (words) => { b.disabled = false; b.ariaBusy = null; said.textContent = words; };
      bridge.request("tools/call", { name: "download_file", arguments: args }).then((r) => {
        const file = obj(obj(obj(r)._meta)["bb/download"]);
        if (obj(r).isError || !str(file.name)) { done(`Not saved: ${firstSentence(resultText(r)) || "bb sent no file."}`); return null; }
        // The file's name is the last segment of the uri: bb made it from the repository and the path, never a `..`.
        const name = str(file.name).replace(/[\\/]/g, "_").replace(/^\.+/, "_").slice(0, 200) || "download";
        const resource = { uri: `file:///${encodeURIComponent(name)}`, mimeType: str(file.mimeType) || "application/octet-stream" };
        if (typeof file.text === "string") resource.text = file.text; else resource.blob = str(file.blob);
        return bridge.request("ui/download-file", { contents: [{ type: "resource", resource }] }).then((answer) => {
          done(obj(answer).isError ? "The host did not save it." : `Saved ${name}.`);
        });
      }).catch(() => done("The host did not save it."));
    });
    return el("span", { class: "bb-save-box" }, b, " ", said);
  }
  return { button, offered };
})();
