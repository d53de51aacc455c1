// Light and dark follow the host: its theme and every style variable it sends are applied on
// :root; view.css gives each variable it uses a fallback, and prefers-color-scheme decides
// when the host says nothing.
const theme = (() => {
  const NAME = /^--[A-Za-z0-9-]{1,80}$/;
  function apply(context) {
    const root = document.documentElement;
    if (context.theme === "light" || context.theme === "dark") {
      root.dataset.theme = context.theme;
      root.style.colorScheme = context.theme;
    }
    const vars = context.styles && context.styles.variables;
    if (vars && typeof vars === "object") {
      for (const [name, value] of Object.entries(vars)) {
        if (!NAME.test(name)) continue;
        if (typeof value === "string" && value.trim()) root.style.setProperty(name, value);
        else root.style.removeProperty(name);
      }
    }
  }
  return { apply };
})();
