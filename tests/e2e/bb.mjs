// Shared helpers for the end-to-end tests: where the bb binary is, and a raw line client.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The bb binary under test: $BB_BIN, else the workspace's debug build. */
export const BB = process.env.BB_BIN || path.join(root, "target", "debug", "bb");

/** Starts `bb ai mcp serve` and talks raw newline-delimited JSON-RPC to it. */
export function rawServer(args = []) {
  const child = spawn(BB, ["ai", "mcp", "serve", "--log-level", "off", ...args], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const queue = [];
  const waiters = [];
  lines.on("line", (line) => {
    const w = waiters.shift();
    if (w) w(line); else queue.push(line);
  });
  return {
    send(text) { child.stdin.write(text + "\n"); },
    next() {
      if (queue.length) return Promise.resolve(queue.shift());
      return new Promise((resolve) => waiters.push(resolve));
    },
    async close() {
      child.stdin.end();
      return new Promise((resolve) => child.on("exit", (code) => resolve(code)));
    },
  };
}

/** The first `n` lines `child` prints on `stream` (rejects if it exits first or takes over 60 s). */
export function firstLines(child, stream, n, what) {
  const rl = createInterface({ input: child[stream] });
  const got = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} printed nothing within 60 s`)), 60000);
    child.once("error", (e) => { clearTimeout(timer); reject(e); });
    child.once("exit", (code) => { clearTimeout(timer); reject(new Error(`${what} exited with ${code}: ${got.join(" | ")}`)); });
    rl.on("line", (line) => {
      if (got.length < n) {
        got.push(line.trim());
        if (got.length === n) { clearTimeout(timer); child.removeAllListeners("exit"); resolve(got); }
      } else if (stream === "stderr") process.stderr.write(`${what}: ${line}\n`);
    });
  });
}
