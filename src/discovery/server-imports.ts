/**
 * Which files a server file or boot hook pulls in, so that static serving can refuse them
 * (docs/reference/http-routes.md). esbuild resolves the way the `.ts` server-file loader does
 * (ts-resolution.ts) and more: relative and extensionless imports, folder `index` files,
 * JSON, the nearest `tsconfig.json` `paths`, `require()`, literal dynamic `import()` and
 * `file:` URLs, from `.js` and `.mjs` files too. An import by
 * package name is resolved too, because it can lead to a servable file: the item's own
 * package name (Node's self-reference through `exports`), or a `file:` or workspace
 * dependency installed as a symlink to another folder. Only what really lies inside a
 * `node_modules` folder stays external: that is never served. Nothing is written; the
 * bundle is thrown away.
 */
import { realpath } from "node:fs/promises";
import { dirname, isAbsolute, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Plugin } from "esbuild";
import { useEsbuild } from "./esbuild-service.js";
import { MODULE_EXTENSIONS } from "./ts-resolution.js";

export interface ImportGraph {
  /** Absolute paths of every file loaded, the entry included (also when `error` is set). */
  files: string[];
  /** Why the graph is incomplete: `files` then holds only what was reached. */
  error: string | undefined;
  /** Where the first error lies, when esbuild could say (a syntax error, an import it cannot resolve). */
  location: SourceLocation | undefined;
  /**
   * Real path of each file → real paths of the files it imports (dev reloads follow these
   * edges back from an edited helper to the server files that use it). Empty when `error` is set.
   */
  imports: Map<string, string[]>;
}

export interface SourceLocation {
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based, as editors count. */
  column: number;
  lineText: string;
  text: string;
}

/** The order the loader tries for an extensionless import, then the rest esbuild can parse. */
const RESOLVE_EXTENSIONS = [...MODULE_EXTENSIONS, ".cts", ".cjs", ".json", ".tsx", ".jsx"];
const PARSED = /\.(?:[cm]?[jt]s|json|[jt]sx)$/i;
/** Marks the plugin's own `resolve` call, so that its resolver does not answer itself. */
const RESOLVING = Symbol("resolving");

export async function importGraph(entry: string): Promise<ImportGraph> {
  const files = new Set<string>();
  // The package the entry itself lies in (an app installed as a package): its files are served.
  const ownPackage = installedPackageOf(await realpath(entry).catch(() => entry));
  // Records every file as it is loaded, so that a graph that fails half-way still names
  // what it reached. A file esbuild has no loader for (`.node`, `.wasm`, data) is recorded
  // and read as empty instead of failing the whole graph.
  const record: Plugin = {
    name: "record-imports",
    setup(builder) {
      // esbuild would take `file:///…` for a package name and leave it out.
      builder.onResolve({ filter: /^file:/ }, (args) => ({ path: fileURLToPath(args.path) }));
      // Package names (and `#` imports): resolved as esbuild would, then judged by the real
      // path, since a symlinked dependency's files are served under the folder it points to.
      builder.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === RESOLVING || isAbsolute(args.path)) return undefined;
        const found = await builder.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: RESOLVING });
        // Built-ins, and a package that is not installed: Node loads nothing servable.
        if (found.errors.length > 0 || found.external || found.namespace !== "file") return { path: args.path, external: true };
        const real = await realpath(found.path).catch(() => found.path);
        const installed = installedPackageOf(real);
        if (installed !== undefined && installed !== ownPackage) return { path: args.path, external: true };
        return { path: real };
      });
      builder.onLoad({ filter: /.*/, namespace: "file" }, (args) => {
        files.add(args.path);
        return PARSED.test(args.path) ? undefined : { contents: "", loader: "empty" };
      });
    },
  };
  const workingDir = dirname(entry);
  try {
    const { metafile } = await useEsbuild((esbuild) =>
      esbuild.build({
        entryPoints: [entry],
        absWorkingDir: workingDir,
        bundle: true,
        write: false,
        metafile: true,
        platform: "node",
        format: "esm",
        logLevel: "silent",
        resolveExtensions: RESOLVE_EXTENSIONS,
        plugins: [record],
      }),
    );
    return { files: [...files], error: undefined, location: undefined, imports: await importEdges(metafile.inputs, workingDir) };
  } catch (error) {
    const errors = (error as { errors?: EsbuildMessage[] }).errors;
    const reason = errors?.length
      ? errors.map((item) => (item.location ? `${resolve(workingDir, item.location.file)}: ${item.text}` : item.text)).join("; ")
      : (error as Error).message;
    return { files: [...files, entry], error: reason, location: locationOf(errors?.[0], workingDir), imports: new Map() };
  }
}

interface EsbuildMessage {
  text: string;
  location?: { file: string; line: number; column: number; lineText: string } | null;
}

function locationOf(message: EsbuildMessage | undefined, workingDir: string): SourceLocation | undefined {
  const at = message?.location;
  if (!message || !at) return undefined;
  return { file: resolve(workingDir, at.file), line: at.line, column: at.column + 1, lineText: at.lineText, text: message.text };
}

/** The metafile's inputs (paths relative to the working folder) as real absolute paths. */
async function importEdges(inputs: Record<string, { imports: Array<{ path: string; external?: boolean }> }>, workingDir: string): Promise<Map<string, string[]>> {
  const real = (path: string) => realpath(resolve(workingDir, path)).catch(() => resolve(workingDir, path));
  const edges = new Map<string, string[]>();
  for (const [input, { imports }] of Object.entries(inputs)) {
    const inside = imports.filter((item) => !item.external);
    edges.set(await real(input), await Promise.all(inside.map((item) => real(item.path))));
  }
  return edges;
}

/**
 * The installed package (`…/node_modules/name` or `…/node_modules/@scope/name`) whose
 * folder holds `path`, or undefined outside any `node_modules`. Another package than the
 * server file's own is never served; the server file's own one is the app itself
 * installed as a package, whose folders are served.
 */
function installedPackageOf(path: string): string | undefined {
  const segments = path.split(sep);
  const at = segments.lastIndexOf("node_modules");
  if (at === -1) return undefined;
  return segments.slice(0, at + (segments[at + 1]?.startsWith("@") ? 3 : 2)).join(sep);
}
