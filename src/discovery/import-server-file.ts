import { createRequire, register } from "node:module";
import { pathToFileURL } from "node:url";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { reapplyYoungGenerationLimit } from "../core/young-generation.js";
import { transformTypeScript } from "./esbuild-service.js";
import type { TransformReply, VersionUpdate } from "./ts-hooks.js";

let hooksPort: MessagePort | undefined;
let nextAck = 0;
const acks = new Map<number, () => void>();

/**
 * Registers the `.ts` loader once per thread (the main thread and each isolation worker).
 * The hooks run in Node's loader thread and send each `.ts` source back here to be
 * transformed (ts-hooks.ts says why).
 */
export function enableTypeScriptServerFiles(): void {
  if (hooksPort) return;
  const { port1, port2 } = new MessageChannel();
  port1.on("message", (message: { id: number; file: string; source: string } | { acked: number }) => {
    if ("acked" in message) {
      acks.get(message.acked)?.();
      acks.delete(message.acked);
      if (acks.size === 0) port1.unref();
      return;
    }
    const { id, file, source } = message;
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
  hooksPort = port1;
}

/**
 * Imports a server file. `version` busts the ESM cache so that dev mode can load an
 * edited file again; the files it imports follow the versions `setModuleVersions` set.
 */
export async function importServerFile(file: string, version?: number): Promise<Record<string, unknown>> {
  if (/\.ts$/.test(file)) enableTypeScriptServerFiles();
  const url = pathToFileURL(file).href + (version === undefined ? "" : `?v=${version}`);
  return (await import(url)) as Record<string, unknown>;
}

/**
 * Dev reloads: from now on, an import of each of these files (real paths) in this thread
 * resolves to that version's instance (null: the first one). Resolves once the loader
 * thread has them, so that the import that follows sees them. The module hooks are
 * registered here if no `.ts` file did it yet: a `.js` server file's helpers need them too.
 *
 * A CommonJS file is cached by its path, not its URL, whatever version its URL carries:
 * its entry in the require cache is dropped so that the new version runs it again.
 */
export async function setModuleVersions(versions: ReadonlyArray<readonly [string, number | null]>): Promise<void> {
  if (versions.length === 0) return;
  enableTypeScriptServerFiles();
  const port = hooksPort!;
  const cache = createRequire(import.meta.url).cache;
  for (const [file] of versions) delete cache[file];
  const ack = nextAck++;
  await new Promise<void>((resolve) => {
    acks.set(ack, resolve);
    port.ref();
    port.postMessage({ versions: versions.map(([file, version]) => [file, version]), ack } satisfies VersionUpdate);
  });
}
