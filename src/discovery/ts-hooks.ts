/**
 * The `.ts` module hooks for Node lines without `module.registerHooks` (Node 20, 22 before
 * 22.15): registered with `module.register`, they run in Node's loader thread
 * (loader-thread.ts registers them). The rules are ts-hook-rules.ts's, shared with the
 * in-thread hooks. Hand-written rather than tsx: tsx hooks the CommonJS loader too and
 * follows the nearest package.json "type", which a plugin folder often lacks.
 *
 * The transform itself runs in the thread that registered these hooks, sent over the port
 * it passes to initialize(): that thread has esbuild loaded for the import graphs anyway,
 * and esbuild's API in this thread cost about 8 MB more resident memory, with a second
 * esbuild service process on top. Dev reloads send module versions over the same port.
 *
 * This cannot work where the main thread waits on the loader thread synchronously (Node
 * 24 does for `import()`): it would never answer the transform. Those lines have in-thread
 * hooks and never load this file.
 */
import { readFile } from "node:fs/promises";
import type { MessagePort } from "node:worker_threads";
import { applyVersions, finishResolution, specifierForNode, typeScriptFileOf, type LoadContext, type LoadResult, type ResolveContext, type ResolveResult } from "./ts-hook-rules.js";

type NextResolve = (specifier: string, context: ResolveContext) => Promise<ResolveResult>;
type NextLoad = (url: string, context: LoadContext) => Promise<LoadResult>;

/** What the registering thread answers to `{ id, file, source }`. */
export type TransformReply = { id: number; code: string } | { id: number; error: string };
/** Sent by the registering thread: real path → version (null: back to the unversioned instance); answered `{ acked }` once applied. */
export type VersionUpdate = { versions: Array<[string, number | null]>; ack: number };

let port: MessagePort;
let nextId = 0;
const pending = new Map<number, { resolve: (code: string) => void; reject: (error: Error) => void }>();
/** Real path → the version its imports resolve to; empty until a dev reload. */
const versions = new Map<string, number>();

export function initialize(data: { port: MessagePort }): void {
  port = data.port;
  port.on("message", (reply: TransformReply | VersionUpdate) => {
    if ("versions" in reply) {
      applyVersions(versions, reply.versions);
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
  return finishResolution(await next(specifierForNode(specifier, context), context), context, versions);
}

export async function load(url: string, context: LoadContext, next: NextLoad): Promise<LoadResult> {
  const file = typeScriptFileOf(url);
  if (file === undefined) return next(url, context);
  const source = await readFile(file, "utf8");
  return { format: "module", source: await transform(file, source), shortCircuit: true };
}
