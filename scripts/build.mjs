// Builds the server (tsc: types checked, ESM emitted to dist/) and the browser client
// (esbuild: one classic script for /__app/client.js, with its brotli and gzip forms, and an
// ESM entry for bundlers, with declarations from tsc). The config schemas are bundled with the part of zod they use
// (src/config/schema.ts says why). Run by `npm install` through the prepare script.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { brotliCompressSync, constants as zlib, gzipSync } from "node:zlib";
import { build } from "esbuild";

const require = createRequire(import.meta.url);
const tsc = require.resolve("typescript/bin/tsc");

rmSync("dist", { recursive: true, force: true });
execFileSync(process.execPath, [tsc, "-p", "tsconfig.json"], { stdio: "inherit" });

// Replaces tsc's dist/config/schema.js. Only zod goes into the bundle: a relative import
// stays an import, so that no module of ours is ever loaded twice.
await build({
  entryPoints: ["src/config/schema.ts"],
  outfile: "dist/config/schema.js",
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  logLevel: "warning",
  legalComments: "none",
  plugins: [
    {
      name: "own-modules-external",
      setup(builder) {
        builder.onResolve({ filter: /^\.\.?\// }, (args) =>
          args.kind !== "entry-point" && !args.importer.includes("node_modules") ? { path: args.path, external: true } : undefined,
        );
      },
    },
  ],
});

if (existsSync("src/client/index.ts")) {
  const common = { bundle: true, target: ["es2020"], sourcemap: true, logLevel: "warning", legalComments: "none" };
  await build({ ...common, entryPoints: ["src/client/browser-entry.ts"], outfile: "dist/client/client.js", format: "iife", minify: true });
  await build({ ...common, entryPoints: ["src/client/index.ts"], outfile: "dist/client/index.js", format: "esm", platform: "neutral" });
  execFileSync(process.execPath, [tsc, "-p", "src/client/tsconfig.json"], { stdio: "inherit" });
  // The server sends these to clients that accept them (src/static/static-routes.ts): the
  // strongest settings cost their CPU once, here, instead of on every request.
  for (const file of ["dist/client/client.js", "dist/client/client.js.map"]) {
    const text = readFileSync(file);
    writeFileSync(`${file}.br`, brotliCompressSync(text, { params: { [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY, [zlib.BROTLI_PARAM_SIZE_HINT]: text.length } }));
    writeFileSync(`${file}.gz`, gzipSync(text, { level: zlib.Z_BEST_COMPRESSION }));
  }
}
