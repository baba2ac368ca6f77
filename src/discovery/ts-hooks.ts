/**
 * Node module hooks (run in the loader thread) that let plugin authors ship `.ts` server
 * files with no build step: esbuild strips the types on load. `.ts` files are always ESM,
 * whatever the nearest package.json says, and a `./x.js` import resolves to `./x.ts` when
 * only the TypeScript file exists (the convention of TypeScript's NodeNext resolution).
 * Hand-written rather than tsx: tsx hooks the CommonJS loader too and follows the nearest
 * package.json "type", which a plugin folder often lacks.
 *
 * The transform itself runs in the thread that registered these hooks, sent over the port
 * it passes to initialize() (import-server-file.ts): that thread has esbuild loaded for the
 * import graphs anyway, and esbuild's API in this thread cost about 8 MB more resident
 * memory, with a second esbuild service process on top.
 */
import { readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import type { MessagePort } from "node:worker_threads";
import { fileURLToPath } from "node:url";

type ResolveContext = { parentURL?: string; conditions?: string[] };
type ResolveResult = { url: string; format?: string | null; shortCircuit?: boolean };
type NextResolve = (specifier: string, context: ResolveContext) => Promise<ResolveResult>;
type LoadContext = { format?: string | null; conditions?: string[] };
type LoadResult = { format: string; source?: string | Buffer | null; shortCircuit?: boolean };
type NextLoad = (url: string, context: LoadContext) => Promise<LoadResult>;

/** What the registering thread answers to `{ id, file, source }`. */
export type TransformReply = { id: number; code: string } | { id: number; error: string };

const TS_FILE = /\.(?:ts|mts)(?:\?.*)?$/;

let port: MessagePort;
let nextId = 0;
const pending = new Map<number, { resolve: (code: string) => void; reject: (error: Error) => void }>();

export function initialize(data: { port: MessagePort }): void {
  port = data.port;
  port.on("message", (reply: TransformReply) => {
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
  if (parent && TS_FILE.test(parent) && (specifier.startsWith("./") || specifier.startsWith("../")) && /\.m?js$/.test(specifier)) {
    const tsUrl = new URL(specifier.replace(/\.js$/, ".ts").replace(/\.mjs$/, ".mts"), parent);
    const jsUrl = new URL(specifier, parent);
    if (!existsSync(fileURLToPath(jsUrl)) && existsSync(fileURLToPath(tsUrl))) {
      return { url: tsUrl.href, format: "module", shortCircuit: true };
    }
  }
  return next(specifier, context);
}

export async function load(url: string, context: LoadContext, next: NextLoad): Promise<LoadResult> {
  if (!url.startsWith("file:") || !TS_FILE.test(url)) return next(url, context);
  const file = fileURLToPath(url.split("?")[0]!);
  const source = await readFile(file, "utf8");
  return { format: "module", source: await transform(file, source), shortCircuit: true };
}
