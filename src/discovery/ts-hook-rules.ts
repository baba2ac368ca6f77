/**
 * What both flavours of the `.ts` module hooks decide alike: the in-thread hooks of Node
 * 22.15+ and 24 (in-thread-hooks.ts) and the loader-thread hooks of Node 20 (ts-hooks.ts).
 * `.ts` files are always ESM, whatever the nearest package.json says. Their imports resolve
 * as esbuild and TypeScript's bundler resolution resolve them (ts-resolution.ts); the file
 * found goes through Node's own resolution, so that it gets the one URL (symlinks resolved)
 * and the one module instance however it is named. A `.json` file they import is a JSON
 * module without the `with { type: "json" }` that Node would demand. `.js` and `.mjs` files
 * keep Node's rules.
 *
 * Dev reloads (dev-reload.ts) give an edited file, and every file that imports it on the way
 * up to a server file, a version, and any import of such a file (from a `.js` file too)
 * resolves to `<url>?v=<version>`. Node caches modules by URL, so that is a fresh instance of
 * the edited helper and of the chain that uses it, one per version, while the files nobody
 * edited keep their one instance.
 */
import { fileURLToPath, pathToFileURL } from "node:url";
import { findTypeScriptImport } from "./ts-resolution.js";

export type ResolveContext = { parentURL?: string; conditions?: string[]; importAttributes?: Record<string, string> };
export type ResolveResult = { url: string; format?: string | null; shortCircuit?: boolean; importAttributes?: Record<string, string> };
export type LoadContext = { format?: string | null; conditions?: string[] };
export type LoadResult = { format: string; source?: string | Buffer | null; shortCircuit?: boolean };

const TS_FILE = /\.(?:ts|mts)(?:\?.*)?$/;
const JSON_FILE = /^file:[^?#]*\.json(?:[?#].*)?$/i;

/** The path of a `.ts` file this URL loads, or undefined for anything Node loads by its own rules. */
export function typeScriptFileOf(url: string): string | undefined {
  if (!url.startsWith("file:") || !TS_FILE.test(url)) return undefined;
  return fileURLToPath(url.split("?")[0]!);
}

/** What to hand to Node's own resolution for `specifier`: the file the `.ts` rules find, if any. */
export function specifierForNode(specifier: string, context: ResolveContext): string {
  const parent = context.parentURL;
  if (parent === undefined || !parent.startsWith("file:") || !TS_FILE.test(parent)) return specifier;
  const file = findTypeScriptImport(specifier, parent);
  return file === undefined ? specifier : pathToFileURL(file).href;
}

/** Node's answer, made a JSON module where a `.ts` file imported JSON, and versioned after a dev reload. */
export function finishResolution(resolved: ResolveResult, context: ResolveContext, versions: ReadonlyMap<string, number>): ResolveResult {
  const parent = context.parentURL;
  const fromTypeScript = parent !== undefined && parent.startsWith("file:") && TS_FILE.test(parent);
  const result = fromTypeScript && context.importAttributes?.type === undefined && JSON_FILE.test(resolved.url) ? asJsonModule(resolved, context) : resolved;
  return versioned(result, versions);
}

/**
 * The URL of the version a dev reload asked for. A URL that carries a query already was
 * asked for by name (a server file loaded with its version, or the author's own `?x`).
 */
function versioned(resolved: ResolveResult, versions: ReadonlyMap<string, number>): ResolveResult {
  if (versions.size === 0 || !resolved.url.startsWith("file:") || resolved.url.includes("?")) return resolved;
  const version = versions.get(fileURLToPath(resolved.url));
  return version === undefined ? resolved : { ...resolved, url: `${resolved.url}?v=${version}` };
}

/**
 * Marks the import as `type: "json"`: Node then loads the file as a JSON module (its
 * parse error names the file), the same instance that an import `with { type: "json" }`
 * of the same file gets.
 */
function asJsonModule(resolved: ResolveResult, context: ResolveContext): ResolveResult {
  return { ...resolved, format: "json", importAttributes: { ...context.importAttributes, type: "json" } };
}

/** Applies a dev reload's versions (null: back to the unversioned instance). */
export function applyVersions(versions: Map<string, number>, update: ReadonlyArray<readonly [string, number | null]>): void {
  for (const [file, version] of update) {
    if (version === null) versions.delete(file);
    else versions.set(file, version);
  }
}
