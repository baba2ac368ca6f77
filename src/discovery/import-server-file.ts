import { register } from "node:module";
import { pathToFileURL } from "node:url";
import { MessageChannel } from "node:worker_threads";
import { reapplyYoungGenerationLimit } from "../core/young-generation.js";
import { transformTypeScript } from "./esbuild-service.js";
import type { TransformReply } from "./ts-hooks.js";

let tsHooksRegistered = false;

/**
 * Registers the `.ts` loader once per thread (the main thread and each isolation worker).
 * The hooks run in Node's loader thread and send each `.ts` source back here to be
 * transformed (ts-hooks.ts says why).
 */
export function enableTypeScriptServerFiles(): void {
  if (tsHooksRegistered) return;
  const { port1, port2 } = new MessageChannel();
  port1.on("message", ({ id, file, source }: { id: number; file: string; source: string }) => {
    transformTypeScript(file, source).then(
      (code) => port1.postMessage({ id, code } satisfies TransformReply),
      (error: unknown) => port1.postMessage({ id, error: (error as Error)?.message ?? String(error) } satisfies TransformReply),
    );
  });
  // An import waiting for its transform keeps the process up by itself.
  port1.unref();
  register(new URL("./ts-hooks.js", import.meta.url), { data: { port: port2 }, transferList: [port2] });
  // The loader thread's heap is set up by now, which put V8's young-generation growth factor back.
  reapplyYoungGenerationLimit();
  tsHooksRegistered = true;
}

/**
 * Imports a server file. `version` busts the ESM cache so that dev mode can load an
 * edited file again; only that file is reloaded, not the files it imports.
 */
export async function importServerFile(file: string, version?: number): Promise<Record<string, unknown>> {
  if (/\.ts$/.test(file)) enableTypeScriptServerFiles();
  const url = pathToFileURL(file).href + (version === undefined ? "" : `?v=${version}`);
  return (await import(url)) as Record<string, unknown>;
}
