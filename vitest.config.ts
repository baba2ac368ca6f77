import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * Files whose assertions hang on real time: calls counted in a rate limit's window, a
 * deadline or a heartbeat measured in tens of milliseconds, a worker or a cluster process
 * that must start within a bound, a connection kept or dropped after an idle time. They run
 * one at a time, after the rest: sharing a core with another file's servers and browsers
 * made some of them miss their window on a 2-core machine (docs/reference/project.md
 * "Tests").
 */
const TIMED = [
  "test/app/drain-behind-nginx.test.ts",
  "test/app/shutdown.test.ts",
  "test/client/rate-limited.test.ts",
  "test/client/retries.test.ts",
  "test/client/retry-after.test.ts",
  "test/client/rpc-stream.test.ts",
  "test/client/stream-e2e.test.ts",
  "test/client/stream-proxy.test.ts",
  "test/cluster/*.test.ts",
  "test/health/probes.test.ts",
  "test/http/lingering-close.test.ts",
  "test/proxy/rate-limit.test.ts",
  "test/proxy/streaming.test.ts",
  "test/rpc/client-gone.test.ts",
  "test/rpc/isolated-downloads.test.ts",
  "test/rpc/streaming.test.ts",
  "test/rpc/streaming-nginx.test.ts",
  "test/runtime/*.test.ts",
  "test/state/hung-store.test.ts",
  "test/state/store-unavailable.test.ts",
];

export default defineConfig({
  test: {
    // Each file starts its own servers on port 0; forks keep process-wide state
    // (globalThis.APP_SERVER, module hooks) apart between files. As many forks as cores,
    // never more: most files wait on servers and browsers, not on their own CPU.
    pool: "forks",
    maxWorkers: availableParallelism(),
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
    // The server under test is the built package, loaded by Node itself: its dynamic
    // imports of plugin files must not go through Vite's module runner.
    server: { deps: { external: [/\/dist\//] } },
    projects: [
      { extends: true, test: { name: "parallel", include: ["test/**/*.test.ts"], exclude: TIMED, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "timed", include: TIMED, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
