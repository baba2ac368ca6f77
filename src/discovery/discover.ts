/**
 * Start-up discovery: runs every boot hook (`register.server.*`), then loads every server
 * file and builds the registry. Runs once before the server listens, never per request.
 */
import type { ResolvedConfig } from "../config/resolve.js";
import { StartupError } from "../errors/http-error.js";
import type { Logger } from "../log/logger.js";
import { importServerFile } from "./import-server-file.js";
import { loadTarget } from "./load-target.js";
import { Registry } from "./registry.js";
import type { ServerOnlyFiles } from "./server-only-files.js";
import { scanRoot, type FoundItem } from "./scan.js";

/** What a boot hook's `register(api)` receives. */
export interface BootApi {
  registerRpcAuthVerifier(name: string, fn: (...args: never[]) => unknown): void;
  registerProxyAuthVerifier(name: string, fn: (...args: never[]) => unknown): void;
  /** This plugin's or module's config section. */
  config: unknown;
  log: Logger;
  dev: boolean;
  kind: "plugin" | "module";
  id: string;
}

export interface DiscoverOptions {
  root: string;
  config: ResolvedConfig;
  log: Logger;
  /** Filled with what every server file and boot hook imports, so that none of it is served. */
  serverOnlyFiles: ServerOnlyFiles;
  bootApi(item: FoundItem): BootApi;
}

export async function discover(options: DiscoverOptions): Promise<Registry> {
  const items = await scanRoot(options.root);
  await Promise.all(items.map((item) => options.serverOnlyFiles.track(item.dir, item.bootHook ? [item.bootHook, ...item.serverFiles] : item.serverFiles)));
  for (const item of items) {
    if (item.bootHook) await runBootHook(item.bootHook, options.bootApi(item));
  }
  const registry = new Registry();
  const warn = (message: string) => options.log.warn(message);
  for (const item of items) {
    const config = options.config.itemConfig(item.kind, item.id);
    registry.add(await loadTarget(item.kind, item.id, item.dir, item.serverFiles, config, options.config.rpc, warn));
  }
  return registry;
}

async function runBootHook(file: string, api: BootApi): Promise<void> {
  let namespace: Record<string, unknown>;
  try {
    namespace = await importServerFile(file);
  } catch (error) {
    throw new StartupError(`cannot load boot hook ${file}: ${(error as Error).message}`, { cause: error });
  }
  if (typeof namespace.register !== "function") {
    throw new StartupError(`boot hook ${file} must export a function named register`);
  }
  try {
    await (namespace.register as (api: BootApi) => unknown)(api);
  } catch (error) {
    throw new StartupError(`boot hook ${file} failed: ${(error as Error).message}`, { cause: error });
  }
}
