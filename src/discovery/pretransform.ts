/**
 * For the in-thread hooks (in-thread-hooks.ts): transforms every `.ts` file a server file
 * reaches before it is imported, with the esbuild service that stops once idle
 * (esbuild-service.ts), so that the synchronous load hook only looks the code up. esbuild
 * walks the imports as the hooks resolve them (relative and extensionless paths, folder
 * `index` files, the tsconfig.json `paths`); installed packages are not walked. A file it
 * cannot reach, or one that fails to parse, is left to the load hook, which transforms it
 * itself or throws the same one-line error.
 */
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Plugin } from "esbuild";
import { transformTypeScript, useEsbuild } from "./esbuild-service.js";
import { rememberTransform } from "./in-thread-hooks.js";
import { MODULE_EXTENSIONS } from "./ts-resolution.js";

const TYPESCRIPT = /\.m?ts$/;

export async function pretransformTypeScript(entry: string): Promise<void> {
  const transformEach: Plugin = {
    name: "transform-ahead",
    setup(builder) {
      builder.onLoad({ filter: TYPESCRIPT, namespace: "file" }, async (args) => {
        const source = await readFile(args.path, "utf8");
        try {
          rememberTransform(args.path, source, { code: await transformTypeScript(args.path, source) });
        } catch (error) {
          // The one-line message alone, as the loader thread passes it on Node 20: esbuild's
          // own error as its cause would be logged after it, saying the same thing again.
          rememberTransform(args.path, source, { error: new SyntaxError((error as Error).message) });
          return { contents: "", loader: "empty" };
        }
        return { contents: source, loader: "ts" };
      });
    },
  };
  await useEsbuild((esbuild) =>
    esbuild.build({
      entryPoints: [entry],
      absWorkingDir: dirname(entry),
      bundle: true,
      write: false,
      platform: "node",
      format: "esm",
      packages: "external",
      logLevel: "silent",
      resolveExtensions: [...MODULE_EXTENSIONS, ".json"],
      plugins: [transformEach],
    }),
  ).catch(() => {
    // An import esbuild cannot resolve: what it reached is remembered, and Node's own
    // resolution names the missing file when the import runs.
  });
}
