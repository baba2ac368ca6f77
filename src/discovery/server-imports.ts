/**
 * Which files a server file or boot hook pulls in, so that static serving can refuse them
 * (README "HTTP routes"). esbuild resolves the way the server-file loader does and more:
 * relative and extensionless imports, directory `index` files, JSON, `require()`, literal
 * dynamic `import()`, `file:` URLs and the item's `tsconfig.json` `paths`. npm packages
 * stay external: `node_modules` is never served anyway. Nothing is written; the bundle is
 * thrown away.
 */
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";

export interface ImportGraph {
  /** Absolute paths of every file loaded, the entry included (also when `error` is set). */
  files: string[];
  /** Why the graph is incomplete: `files` then holds only what was reached. */
  error: string | undefined;
}

/** The order the loader tries for an extensionless import, then the rest esbuild can parse. */
const RESOLVE_EXTENSIONS = [".ts", ".mts", ".js", ".mjs", ".cts", ".cjs", ".json", ".tsx", ".jsx"];
const PARSED = /\.(?:[cm]?[jt]s|json|[jt]sx)$/i;

export async function importGraph(entry: string): Promise<ImportGraph> {
  const files = new Set<string>();
  // Records every file as it is loaded, so that a graph that fails half-way still names
  // what it reached. A file esbuild has no loader for (`.node`, `.wasm`, data) is recorded
  // and read as empty instead of failing the whole graph.
  const record: Plugin = {
    name: "record-imports",
    setup(builder) {
      // esbuild would take `file:///…` for a package name and leave it out.
      builder.onResolve({ filter: /^file:/ }, (args) => ({ path: fileURLToPath(args.path) }));
      builder.onLoad({ filter: /.*/, namespace: "file" }, (args) => {
        files.add(args.path);
        return PARSED.test(args.path) ? undefined : { contents: "", loader: "empty" };
      });
    },
  };
  try {
    await build({
      entryPoints: [entry],
      absWorkingDir: dirname(entry),
      bundle: true,
      write: false,
      packages: "external",
      platform: "node",
      format: "esm",
      logLevel: "silent",
      resolveExtensions: RESOLVE_EXTENSIONS,
      plugins: [record],
    });
    return { files: [...files], error: undefined };
  } catch (error) {
    const errors = (error as { errors?: Array<{ text: string; location?: { file: string } | null }> }).errors;
    const reason = errors?.length
      ? errors.map((item) => (item.location ? `${item.location.file}: ${item.text}` : item.text)).join("; ")
      : (error as Error).message;
    return { files: [...files, entry], error: reason };
  }
}
