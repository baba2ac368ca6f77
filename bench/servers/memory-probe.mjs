// Preloaded into a server by the memory benchmark (`node --expose-gc --import <this> index.js`):
// on SIGUSR2 it runs full garbage collections, then writes the process's memory to
// $BENCH_MEMORY_FILE. Heap figures taken at a random point of V8's collection cycle differ
// by megabytes from one sample to the next; after a forced full collection, what is left is
// what the process really holds, so two samples compare. It answers a signal rather than a
// dev-mode status call because dev mode changes the process being measured (pretty logs, a
// ring buffer of log entries, reload checks).
import { readFileSync, writeFileSync } from "node:fs";

const file = process.env.BENCH_MEMORY_FILE;
let sample = 0;

process.on("SIGUSR2", () => {
  // Twice: objects freed by the first collection's finalizers go in the second.
  globalThis.gc?.();
  globalThis.gc?.();
  const status = readFileSync("/proc/self/status", "utf8");
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  sample += 1;
  writeFileSync(file, JSON.stringify({ sample, ...process.memoryUsage(), vmRssKb: kb("VmRSS"), vmHwmKb: kb("VmHWM") }));
});
