/**
 * The loader-thread path of the `.ts` hooks, for Node lines without `module.registerHooks`
 * (Node 20): registers ts-hooks.ts with `module.register` and answers its transforms and
 * version acknowledgements over a MessagePort (ts-hooks.ts says why the transform runs here).
 */
import { register } from "node:module";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { transformTypeScript } from "./esbuild-service.js";
import type { TransformReply, VersionUpdate } from "./ts-hooks.js";

let hooksPort: MessagePort | undefined;
let nextAck = 0;
const acks = new Map<number, () => void>();

/** Registers the hooks once in this thread. */
export function registerLoaderThreadHooks(): void {
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
  hooksPort = port1;
}

/** Sends a dev reload's versions to the loader thread; resolves once it has applied them. */
export async function setLoaderThreadVersions(versions: ReadonlyArray<readonly [string, number | null]>): Promise<void> {
  registerLoaderThreadHooks();
  const port = hooksPort!;
  const ack = nextAck++;
  await new Promise<void>((resolve) => {
    acks.set(ack, resolve);
    port.ref();
    port.postMessage({ versions: versions.map(([file, version]) => [file, version]), ack } satisfies VersionUpdate);
  });
}
