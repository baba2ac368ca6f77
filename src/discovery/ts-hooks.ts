/**
 * Node module hooks (run in the loader thread) that let plugin authors ship `.ts` server
 * files with no build step: esbuild strips the types on load. `.ts` files are always ESM,
 * whatever the nearest package.json says. Their imports resolve as esbuild and
 * TypeScript's bundler resolution resolve them (ts-resolution.ts): extensionless paths,
 * folders, `./x.js` for `./x.ts`, the tsconfig.json `paths`. The file found goes through
 * Node's own resolution, so that it gets the one URL (symlinks resolved) and the one module
 * instance however it is named. A `.json` file they import is a JSON module without the
 * `with { type: "json" }` that Node would demand. `.js` and `.mjs` files keep Node's rules.
 * Hand-written rather than tsx: tsx hooks the CommonJS loader too and follows the nearest
 * package.json "type", which a plugin folder often lacks.
 *
 * The transform itself runs in the thread that registered these hooks, sent over the port
 * it passes to initialize() (import-server-file.ts): that thread has esbuild loaded for the
 * import graphs anyway, and esbuild's API in this thread cost about 8 MB more resident
 * memory, with a second esbuild service process on top.
 *
 * Dev reloads (dev-reload.ts) also send module versions over that port: an edited file,
 * and every file that imports it on the way up to a server file, gets a version, and any
 * import of such a file (from a `.js` file too) resolves to `<url>?v=<version>`. Node caches
 * modules by URL, so that is a fresh instance of the edited helper and of the chain that
 * uses it, one per version, while the files nobody edited keep their one instance.
 */
import { readFile } from "node:fs/promises";
import type { MessagePort } from "node:worker_threads";
import { fileURLToPath, pathToFileURL } from "node:url";
import { findTypeScriptImport } from "./ts-resolution.js";

type ResolveContext = { parentURL?: string; conditions?: string[]; importAttributes?: Record<string, string> };
type ResolveResult = { url: string; format?: string | null; shortCircuit?: boolean; importAttributes?: Record<string, string> };
type NextResolve = (specifier: string, context: ResolveContext) => Promise<ResolveResult>;
type LoadContext = { format?: string | null; conditions?: string[] };
type LoadResult = { format: string; source?: string | Buffer | null; shortCircuit?: boolean };
type NextLoad = (url: string, context: LoadContext) => Promise<LoadResult>;

/** What the registering thread answers to `{ id, file, source }`. */
export type TransformReply = { id: number; code: string } | { id: number; error: string };
/** Sent by the registering thread: real path → version (null: back to the unversioned instance); answered `{ acked }` once applied. */
export type VersionUpdate = { versions: Array<[string, number | null]>; ack: number };

const TS_FILE = /\.(?:ts|mts)(?:\?.*)?$/;
const JSON_FILE = /^file:[^?#]*\.json(?:[?#].*)?$/i;

let port: MessagePort;
let nextId = 0;
const pending = new Map<number, { resolve: (code: string) => void; reject: (error: Error) => void }>();
/** Real path → the version its imports resolve to; empty until a dev reload. */
const versions = new Map<string, number>();

export function initialize(data: { port: MessagePort }): void {
  port = data.port;
  port.on("message", (reply: TransformReply | VersionUpdate) => {
    if ("versions" in reply) {
      for (const [file, version] of reply.versions) {
        if (version === null) versions.delete(file);
        else versions.set(file, version);
      }
      port.postMessage({ acked: reply.ack });
      return;
    }
    const waiting = pending.get(reply.id);
    if (!waiting) return;
    pending.delete(reply.id);
    if (pending.size === 0) port.unref();
    if ("code" in reply) waiting.resolve(reply.code);
    else waiting.reject(new Error(reply.error));
  });
  port.unref();
}

function transform(file: string, source: string): Promise<string> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    // Held while an answer is due, so that this thread waits for it.
    if (pending.size === 1) port.ref();
    port.postMessage({ id, file, source });
  });
}

export async function resolve(specifier: string, context: ResolveContext, next: NextResolve): Promise<ResolveResult> {
  const parent = context.parentURL;
  if (parent === undefined || !parent.startsWith("file:") || !TS_FILE.test(parent)) return versioned(await next(specifier, context));
  const file = findTypeScriptImport(specifier, parent);
  const resolved = await next(file === undefined ? specifier : pathToFileURL(file).href, context);
  return versioned(context.importAttributes?.type === undefined && JSON_FILE.test(resolved.url) ? asJsonModule(resolved, context) : resolved);
}

/**
 * The URL of the version a dev reload asked for. A URL that carries a query already was
 * asked for by name (a server file loaded with its version, or the author's own `?x`).
 */
function versioned(resolved: ResolveResult): ResolveResult {
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

export async function load(url: string, context: LoadContext, next: NextLoad): Promise<LoadResult> {
  if (!url.startsWith("file:") || !TS_FILE.test(url)) return next(url, context);
  const file = fileURLToPath(url.split("?")[0]!);
  const source = await readFile(file, "utf8");
  return { format: "module", source: await transform(file, source), shortCircuit: true };
}
