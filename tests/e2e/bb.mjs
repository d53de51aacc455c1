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
