/**
 * The `.ts` module hooks on Node lines with `module.registerHooks` (22.15+, 24): synchronous
 * hooks that run in the thread that imports, so no loader thread is started and nothing is
 * posted between threads (docs/guides/deployment.md "Node lines"). On Node 24 that is also what works at all: its
 * `import()` waits on a loader thread synchronously, and the loader-thread hooks
 * (ts-hooks.ts), which post each source back to be transformed, would wait forever.
 *
 * A synchronous load hook needs a synchronous transform, and the two at hand each cost
 * resident memory for the life of the process: Node's `stripTypeScriptTypes` loads a
 * WebAssembly compiler (22–27 MB more RSS, measured), esbuild's `transformSync` a worker
 * thread beside its service (18–24 MB). So importServerFile has the files transformed ahead,
 * by the async esbuild service that stops once idle (pretransform.ts), and the load hook
 * takes the code from here. A file nobody transformed ahead (a dynamic import of a computed
 * name, a file edited since) falls back to `stripTypeScriptTypes` (strip-types.ts).
 */
import * as nodeModule from "node:module";
import { readFileSync } from "node:fs";
import { applyVersions, finishResolution, specifierForNode, typeScriptFileOf, type LoadContext, type LoadResult, type ResolveContext, type ResolveResult } from "./ts-hook-rules.js";
import { stripTypesSync } from "./strip-types.js";

type SyncResolve = (specifier: string, context: ResolveContext, next: (specifier: string, context: ResolveContext) => ResolveResult) => ResolveResult;
type SyncLoad = (url: string, context: LoadContext, next: (url: string, context: LoadContext) => LoadResult) => LoadResult;
/** Typed here: the supported floor's types (Node 20) do not have it. */
const registerHooks = (nodeModule as { registerHooks?: (hooks: { resolve: SyncResolve; load: SyncLoad }) => unknown }).registerHooks;

/** Real path → the version its imports resolve to; empty until a dev reload. */
const versions = new Map<string, number>();
/** Path → the source transformed ahead and its code (or why it could not be). */
const transformed = new Map<string, { source: string; code: string } | { source: string; error: Error }>();
let installed = false;

/** True on the Node lines that run `.ts` files through these hooks. */
export const inThreadHooksAvailable = typeof registerHooks === "function";

/** Registers the hooks once in this thread (the main thread and each isolation worker). */
export function installInThreadHooks(): void {
  if (installed) return;
  installed = true;
  registerHooks!({ resolve, load });
}

/** Remembers what the pre-transform made of `file` (its code, or its syntax error) for the load hook. */
export function rememberTransform(file: string, source: string, outcome: { code: string } | { error: Error }): void {
  transformed.set(file, { source, ...outcome });
}

/** A dev reload's versions, applied before the import that follows. */
export function setInThreadVersions(update: ReadonlyArray<readonly [string, number | null]>): void {
  applyVersions(versions, update);
}

function resolve(specifier: string, context: ResolveContext, next: (specifier: string, context: ResolveContext) => ResolveResult): ResolveResult {
  return finishResolution(next(specifierForNode(specifier, context), context), context, versions);
}

function load(url: string, context: LoadContext, next: (url: string, context: LoadContext) => LoadResult): LoadResult {
  const file = typeScriptFileOf(url);
  if (file === undefined) return next(url, context);
  const source = readFileSync(file, "utf8");
  const ahead = transformed.get(file);
  // Loaded once per URL, so the code is not kept: a dev reload transforms the file again.
  transformed.delete(file);
  if (ahead !== undefined && ahead.source === source) {
    if ("error" in ahead) throw ahead.error;
    return { format: "module", source: ahead.code, shortCircuit: true };
  }
  return { format: "module", source: stripTypesSync(file, source), shortCircuit: true };
}
