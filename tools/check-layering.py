#!/usr/bin/env python3
"""The layering check (issue 10): arrows point down only, and there is one drive loop.

Fails (exit 1, naming the files) when
  (a) core/src has an import circle between its top-level modules (a top-level file, or a folder with its
      mod.rs and children), or breaks a folder rule: tools/ must not import views/, views/ must not import
      tools/, reads/ and writes/ (where every Bitbucket request is built) import neither, and nothing but
      `catalogue` and `lib.rs` imports `tools::` or `views::` (a folder's own files may use their siblings);
  (b) app/src, bitbucket/src, shell-http/src, shell-stdio/src, drive/src, tools/stack/src (the Bitbucket stand-in) or hyper-smol/src (the
      hyper-on-smol glue of shell-http and the stand-in) has an import circle between files: no file imports a file
      that imports it back, directly or through others;
  (c) `poll_output()` is called outside core/, drive/src/ and test, bench, example or fuzz code: a second
      drive loop;
  (d) a crate's Cargo.toml names a bb crate that is not below it: app (bb) -> {shell-stdio (bb-stdio),
      shell-http (bb-http), bitbucket (bb-bitbucket)} -> drive -> core -> assets; shell-http and the stand-in
      sit on hyper-smol. The client and the transports never name each other or the application; test code
      (dev-dependencies) may also name the stand-in (bb-stack).

Imports are read from `use` trees and `crate::`/`super::`/`self::`/child-module paths, after comments, string
literals and `#[cfg(test)]` items are blanked. Run from anywhere: paths are relative to the repository.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def blank(text, start, end):
    """`text` with [start, end) replaced by spaces, newlines kept (so line numbers survive)."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def strip_comments_and_strings(src):
    """Comments become spaces and literals empty, so neither is read as an import."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif re.match(r'b?r#*"', src[i:i + 40]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'b?r(#*)"', src[i:])
            if m:
                close = '"' + m.group(1)
                j = src.find(close, i + m.end())
                j = n if j < 0 else j + len(close)
                out.append('""' + re.sub(r"[^\n]", " ", src[i:j])[2:])
                i = j
            else:
                out.append(c)
                i += 1
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "'":
            m = re.match(r"'(\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'])'", src[i:i + 16])
            if m:
                out.append(" " * m.end())
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def item_end(src, i):
    """The end of the item starting at `i`: its `;`, or the brace that closes its first block."""
    depth = 0
    while i < len(src):
        c = src[i]
        if c == ";" and depth == 0:
            return i + 1
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(src)


TEST_ATTR = re.compile(r"#\[cfg\((test|all\(test\b[^\]]*|any\(test\b[^\]]*)\)\]")


def strip_test_items(src):
    """Blanks every `#[cfg(test)]` item; returns the text and the names of test modules kept in their own files."""
    test_mods = set()
    while True:
        m = TEST_ATTR.search(src)
        if not m:
            return src, test_mods
        j = m.end()
        # Further attributes on the same item.
        while True:
            a = re.match(r"\s*#\[[^\]]*\]", src[j:])
            if not a:
                break
            j += a.end()
        decl = re.match(r"\s*(pub(\([^)]*\))?\s+)?mod\s+(\w+)\s*;", src[j:])
        if decl:
            test_mods.add(decl.group(3))
        src = blank(src, m.start(), item_end(src, j))


def split_top(s):
    """Splits a use-tree list on its top-level commas."""
    parts, depth, cur = [], 0, ""
    for c in s:
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += c == "{"
        depth -= c == "}"
        cur += c
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def use_paths(tree, prefix=()):
    """Every path a `use` tree names, as tuples of segments (renames and globs dropped)."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)
    if tree.startswith("::"):
        tree = tree[2:]
    m = re.match(r"^((?:\w+::)*)\{(.*)\}$", tree)
    if m:
        head = tuple(s for s in m.group(1).split("::") if s)
        paths = []
        for part in split_top(m.group(2)):
            paths += use_paths(part, prefix + head)
        return paths or [prefix + head]
    return [prefix + tuple(s for s in tree.split("::") if s and s != "*")]


class Crate:
    """The files of one crate's src/ and the module path each defines."""

    def __init__(self, src_dir):
        self.src_dir = src_dir
        self.files = {}  # module path (tuple) -> relative file path
        self.skipped = []
        for dirpath, _, names in os.walk(src_dir):
            for name in sorted(names):
                if not name.endswith(".rs"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), src_dir)
                parts = rel[:-3].split(os.sep)
                if parts[-1] in ("mod", "lib", "main"):
                    parts = parts[:-1]
                if rel == "main.rs":
                    parts = ["<main>"]
                self.files[tuple(parts)] = rel
        self.texts = {}
        self.test_files = set()
        for mod, rel in self.files.items():
            with open(os.path.join(src_dir, rel), encoding="utf-8") as f:
                raw = f.read()
            text, test_mods = strip_test_items(strip_comments_and_strings(raw))
            self.texts[mod] = text
            for t in test_mods:
                self.test_files.add(mod + (t,) if rel != "main.rs" else (t,))
        self.reexports = self._reexports()

    def children(self, mod):
        return {m[-1] for m in self.files if len(m) == len(mod) + 1 and m[: len(mod)] == mod}

    def _reexports(self):
        """Names `lib.rs` re-exports (`pub use a::X`), to resolve `crate::X` to module `a`."""
        names = {}
        text = self.texts.get((), "")
        for m in re.finditer(r"\bpub\s+use\s+([^;]+);", text):
            for path in use_paths(m.group(1)):
                if path and path[0] == "crate":
                    path = path[1:]
                if path:
                    names[path[-1]] = path
        return names

    def resolve(self, mod, path):
        """The module (file) a path used in `mod` points into, or None when it leaves the crate."""
        if not path:
            return None
        own = mod
        if path[0] == "crate":
            absolute = path[1:]
        elif path[0] == "super":
            base = list(own)
            while path and path[0] == "super":
                base = base[:-1]
                path = path[1:]
            absolute = tuple(base) + tuple(path)
        elif path[0] == "self":
            absolute = own + path[1:]
        elif path[0] in self.children(own):
            absolute = own + path
        else:
            return None
        if absolute and absolute[0] in self.reexports and (absolute[0],) not in self.files:
            absolute = self.reexports[absolute[0]] + absolute[1:]
        best = ()
        for k in range(len(absolute), 0, -1):
            if absolute[:k] in self.files:
                best = absolute[:k]
                break
        return best

    def imports(self, mod):
        """(target module, the path as written) for every path `mod` uses in code that is not a test's."""
        text = self.texts[mod]
        found = []
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            for path in use_paths(m.group(1)):
                target = self.resolve(mod, path)
                if target is not None:
                    found.append((target, "::".join(path)))
        code = re.sub(r"\buse\s+[^;]+;", "", text)
        heads = {"crate", "super", "self"} | self.children(mod)
        for m in re.finditer(r"(?<![\w:])((\w+)(?:::\w+)+)", code):
            if m.group(2) in heads:
                path = tuple(m.group(1).split("::"))
                target = self.resolve(mod, path)
                if target is not None:
                    found.append((target, m.group(1)))
        return found

    def modules(self):
        return [m for m in self.files if m not in self.test_files]


def circles(nodes, edges):
    """The strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


# Where core builds its Bitbucket requests: the reads and the writes, which tools and views call and never the
# other way round.
REQUEST_HOMES = ("reads", "writes")


def check_core(failures):
    crate = Crate(os.path.join(ROOT, "core/src"))

    def top(m):
        return m[0] if m else "lib"

    support = {"testing"}  # built only for tests (`cfg(any(test, feature = "testing"))`)
    edges, why = {}, {}
    tops = set()
    rule_breaks = []
    for mod in crate.modules():
        if top(mod) in support:
            continue
        src = "core/src/" + crate.files[mod]
        tops.add(top(mod))
        for target, written in crate.imports(mod):
            a, b = top(mod), top(target)
            if b in support:
                continue
            if a != b:
                edges.setdefault(a, set()).add(b)
                why.setdefault((a, b), []).append(f"{src} uses {written}")
            # Folder rules.
            for folder in ("tools", "views"):
                if b == folder and a in REQUEST_HOMES:
                    rule_breaks.append(
                        f"{src} imports {folder}:: ({written}); {a}/ builds Bitbucket requests for tools and views "
                        "and imports neither"
                    )
                elif b == folder and a not in ("catalogue", "lib", folder):
                    rule_breaks.append(f"{src} imports {folder}:: ({written}); only catalogue and lib.rs may")
    found = circles(tops, edges)
    for comp in found:
        members = set(comp)
        lines = [f"core: import circle between {', '.join(comp)}:"]
        for (a, b), uses in sorted(why.items()):
            if a in members and b in members:
                uses = sorted(set(uses))
                more = f" (and {len(uses) - 3} more)" if len(uses) > 3 else ""
                lines.append(f"    {a} -> {b}: {'; '.join(uses[:3])}{more}")
        failures.append("\n".join(lines))
    failures.extend("core: " + r for r in sorted(set(rule_breaks)))
    n_edges = sum(len(v) for v in edges.values())
    print(
        f"core: {len(tops)} modules ({len(crate.modules())} files), {n_edges} arrows, {len(found)} circles, "
        f"{len(set(rule_breaks))} folder-rule breaks (testing.rs, test support, not counted)"
    )


def check_files(name, src_dir, failures, skip=(), within_folders=False):
    """File-level circles. A folder's face (its mod.rs, or lib.rs) declaring, using or re-exporting its
    own children is not an arrow: the face and its children count as the folder, as `farm-studio` reads it."""
    path = os.path.join(ROOT, src_dir)
    if not os.path.isdir(path):
        print(f"{name}: no {src_dir}, skipped")
        return
    crate = Crate(path)
    edges, why = {}, {}
    mods = [m for m in crate.modules() if not (m and m[0] in skip)]
    for mod in mods:
        for target, written in crate.imports(mod):
            if target[: len(mod)] == mod or (target and target[0] in skip):
                continue
            if target in crate.files:
                edges.setdefault(mod, set()).add(target)
                why.setdefault((mod, target), []).append(written)
    found = circles(mods, edges)
    if within_folders:  # circles across top-level modules are the module check's to report
        found = [c for c in found if len({m[0] if len(m) > 1 else None for m in c}) == 1 and len(c[0]) > 1]
    for comp in found:
        members = set(comp)
        lines = [f"{name}: import circle between files {', '.join(src_dir + '/' + crate.files[m] for m in comp)}:"]
        for (a, b), uses in sorted(why.items()):
            if a in members and b in members:
                lines.append(f"    {crate.files[a]} -> {crate.files[b]}: {', '.join(sorted(set(uses)))}")
        failures.append("\n".join(lines))
    n_edges = sum(len(v) for v in edges.values())
    print(f"{name}: {len(mods)} files, {n_edges} arrows, {len(found)} circles")


def check_drive_loop(failures):
    """`poll_output()` is drained in one place outside the core: drive/src."""
    allowed_roots = ("core/", "drive/src/", "fuzz/")
    test_dirs = ("tests", "benches", "examples")
    callers, bad = [], []
    for dirpath, dirnames, names in os.walk(ROOT):
        rel_dir = os.path.relpath(dirpath, ROOT)
        dirnames[:] = [d for d in dirnames if d not in ("target", "node_modules", ".git") and not d.startswith(".")]
        for name in names:
            if not name.endswith(".rs"):
                continue
            rel = os.path.normpath(os.path.join(rel_dir, name))
            with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                text, _ = strip_test_items(strip_comments_and_strings(f.read()))
            calls = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(r"\.\s*poll_output\s*\(", text)]
            if not calls:
                continue
            callers.append(rel)
            parts = rel.split(os.sep)
            if rel.startswith(allowed_roots) or any(p in test_dirs for p in parts[:-1]):
                continue
            bad.append(f"drive loop: {rel} calls poll_output() (line {', '.join(map(str, calls))}); "
                       "only drive/src (and core, tests, benches, fuzz) may drain the server")
    failures.extend(bad)
    shells = [c for c in callers if not c.startswith(("core/", "fuzz/")) and not any(p in test_dirs for p in c.split(os.sep)[:-1])]
    print(f"drive loop: poll_output() called outside core, tests and fuzz in {', '.join(shells) or 'no file'}; "
          f"{len(bad)} outside drive/src")


# (d): each product crate's folder, its package, and the bb crates it may name (arrows down only).
BELOW = {
    "app": ("bb", {"bb-core", "bb-drive", "bb-bitbucket", "bb-http", "bb-stdio"}),
    "shell-stdio": ("bb-stdio", {"bb-core", "bb-drive"}),
    "shell-http": ("bb-http", {"bb-core", "bb-drive", "bb-hyper-smol"}),
    "bitbucket": ("bb-bitbucket", {"bb-core", "bb-drive"}),
    "drive": ("bb-drive", {"bb-core"}),
    "core": ("bb-core", {"bb-assets"}),
    "assets": ("bb-assets", set()),
    "hyper-smol": ("bb-hyper-smol", set()),
    "tools/stack": ("bb-stack", {"bb-hyper-smol"}),
}


def check_crates(failures):
    """Every bb crate a Cargo.toml names lies below it (dev-dependencies may add the stand-in and the crate itself)."""
    arrows = 0
    for folder, (package, below) in BELOW.items():
        with open(os.path.join(ROOT, folder, "Cargo.toml"), encoding="utf-8") as f:
            section = None
            for n, line in enumerate(f, 1):
                line = line.split("#", 1)[0].strip()
                if line.startswith("["):
                    section = line.strip("[]").rsplit(".", 1)[-1]
                    continue
                if section not in ("dependencies", "dev-dependencies", "build-dependencies"):
                    continue
                m = re.match(r"(bb(?:-[a-z-]+)?)\s*[.=]", line)
                if not m:
                    continue
                name = m.group(1)
                allowed = below | ({"bb-stack", package} if section == "dev-dependencies" else set())
                if name in allowed:
                    arrows += 1
                    continue
                failures.append(f"crates: {folder}/Cargo.toml:{n} ({package}, [{section}]) names {name}, "
                                f"which is not below it (it may name {', '.join(sorted(allowed)) or 'no bb crate'})")
    print(f"crates: {len(BELOW)} crates, {arrows} arrows down")


def main():
    failures = []
    check_core(failures)
    check_files("core (files inside a folder)", "core/src", failures, skip=("testing",), within_folders=True)
    for name, src in (
        ("app", "app/src"),
        ("bitbucket", "bitbucket/src"),
        ("shell-http", "shell-http/src"),
        ("shell-stdio", "shell-stdio/src"),
        ("drive", "drive/src"),
        ("stack", "tools/stack/src"),
        ("hyper-smol", "hyper-smol/src"),
    ):
        check_files(name, src, failures)
    check_drive_loop(failures)
    check_crates(failures)
    if failures:
        print("\nlayering check failed:", file=sys.stderr)
        for f in failures:
            print(f, file=sys.stderr)
        return 1
    print("layering: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
