import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Each file starts its own servers on port 0; forks keep process-wide state
    // (globalThis.APP_SERVER, module hooks) apart between files.
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
    // The server under test is the built package, loaded by Node itself: its dynamic
    // imports of plugin files must not go through Vite's module runner.
    server: { deps: { external: [/\/dist\//] } },
  },
});
