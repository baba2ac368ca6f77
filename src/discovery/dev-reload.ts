/**
 * Dev mode only: before a call, reload any server file of the target whose mtime changed,
 * so an edited method takes effect without a restart. Only the edited file itself is
 * re-imported (the ESM cache keeps what it imports); a file that fails to load keeps its
 * previous version and the error is logged. What the edited file imports is worked out
 * again before it loads, so that a helper it starts importing is never served.
 */
import { stat } from "node:fs/promises";
import type { RpcSettings } from "../config/resolve.js";
import type { Logger } from "../log/logger.js";
import { buildMethods, loadServerFile } from "./load-target.js";
import type { Target } from "./registry.js";
import type { ServerOnlyFiles } from "./server-only-files.js";

const inFlight = new WeakMap<Target, Promise<void>>();

export function refreshTarget(target: Target, defaults: RpcSettings, log: Logger, serverOnlyFiles: ServerOnlyFiles): Promise<void> {
  const pending = inFlight.get(target);
  if (pending) return pending;
  const run = reloadChanged(target, defaults, log, serverOnlyFiles).finally(() => inFlight.delete(target));
  inFlight.set(target, run);
  return run;
}

async function reloadChanged(target: Target, defaults: RpcSettings, log: Logger, serverOnlyFiles: ServerOnlyFiles): Promise<void> {
  const files = [...target.files];
  let changed = false;
  for (const [index, file] of files.entries()) {
    let mtimeMs: number;
    try {
      ({ mtimeMs } = await stat(file.path));
    } catch {
      continue;
    }
    if (mtimeMs === file.mtimeMs) continue;
    await serverOnlyFiles.track(target.dir, [file.path]);
    try {
      files[index] = await loadServerFile(file.path, mtimeMs, file.bootHook);
      changed = true;
      log.info({ file: file.path }, "server file reloaded");
    } catch (error) {
      log.error({ err: error, file: file.path }, "server file failed to reload; keeping the previous version");
      files[index] = { ...file, mtimeMs };
    }
  }
  if (!changed) return;
  try {
    target.methods = buildMethods(target.kind, target.id, files, defaults, (message) => log.warn(message));
    target.files = files;
  } catch (error) {
    log.error({ err: error }, "reloaded server files conflict; keeping the previous methods");
  }
}
