// The page's entry point. Until the views land it shows a tool result's text, as text.
const root = document.getElementById("view");
function draw(...nodes) { root.replaceChildren(...nodes); }
draw(el("p", { class: "bb-status" }, "Waiting for the result…"));

bridge.on("ui/notifications/tool-result", (result) => {
  const texts = (result.content || []).filter((b) => b && b.type === "text").map((b) => String(b.text));
  draw(el("pre", { class: "bb-text" }, texts.join("\n\n")));
});
bridge.on("ui/notifications/tool-cancelled", () => draw(el("p", { class: "bb-status" }, "The call was cancelled.")));
bridge.on("ui/resource-teardown", () => ({}));

new ResizeObserver(() => {
  bridge.notify("ui/notifications/size-changed", { width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight });
}).observe(document.documentElement);

bridge.request("ui/initialize", {
  protocolVersion: "2026-01-26",
  appInfo: { name: "bb", version: "0.1.0" },
  appCapabilities: { availableDisplayModes: ["inline"] },
}).then(() => bridge.notify("ui/notifications/initialized", {}))
  .catch(() => draw(el("p", { class: "bb-status" }, "The host did not answer.")));
