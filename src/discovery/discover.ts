/**
 * Start-up discovery: reads each item's secure config, runs every boot hook
 * (`register.server.*`), then loads every server file and builds the registry. Runs once
 * before the server listens, never per request.
 *
 * A plugin or module that fails (a file that does not load, a boot hook that throws, a
 * bad policy or server.json) is logged and kept in the registry as failed, so its calls
 * answer 503 RPC_TARGET_UNAVAILABLE while the others serve; with `strict` the start fails
 * instead (docs/guides/server-methods.md "Server methods").
 */
import type { ResolvedConfig } from "../config/resolve.js";
import { itemSecure, mergeSecureTiers, type SecureBlock } from "../config/secure-config.js";
import { createCoreFacade } from "../core/facade.js";
import { StartupError } from "../errors/http-error.js";
import type { Logger } from "../log/logger.js";
import type { BootApi } from "../plugin-api/boot-api.js";
import { readAuthorConfig } from "./author-config.js";
import { importServerFile } from "./import-server-file.js";
import { ItemLoadError, buildMethods, loadServerFiles } from "./load-target.js";
import { explainLoadError } from "./load-error.js";
import { warnConfigWithoutItem } from "./item-config-check.js";
import type { ModuleGraph } from "./module-graph.js";
import { Registry, type ItemFailure, type Target } from "./registry.js";
import type { ServerOnlyFiles } from "./server-only-files.js";
import type { ServerRoutes } from "./server-routes.js";
import { scanRoot, type FoundItem } from "./scan.js";

export interface DiscoverOptions {
  root: string;
  dev: boolean;
  config: ResolvedConfig;
  log: Logger;
  /** Filled with what every server file and boot hook imports, so that none of it is served. */
  serverOnlyFiles: ServerOnlyFiles;
  /** Filled by boot hooks; a failed item's routes are dropped. */
  serverRoutes: ServerRoutes;
  /** Called when an item fails, to drop what its boot hook registered elsewhere (verifiers). */
  onItemFailed(item: FoundItem): void;
  bootApi(item: FoundItem, target: Target): BootApi;
  /** Dev mode: keeps what each server file imports, so that an edit reloads what uses it. */
  moduleGraph?: ModuleGraph;
  /** Told what the start waits for next (a file to load, a boot hook to return), for the start watch. */
  onWaiting?(what: string): void;
}

export async function discover(options: DiscoverOptions): Promise<Registry> {
  const { config, log } = options;
  const items = await scanRoot(options.root);
  warnConfigWithoutItem(config.configuredItems, items, log);
  await Promise.all(
    items.map(async (item) => {
      const graphs = await options.serverOnlyFiles.track(item.dir, item.bootHook ? [item.bootHook, ...item.serverFiles] : item.serverFiles);
      for (const [entry, graph] of graphs) await options.moduleGraph?.record(entry, graph);
    }),
  );
  const strict = config.strictStartup;
  const registry = new Registry();
  const targets = new Map<FoundItem, Target>();

  const fail = (item: FoundItem, error: unknown) => {
    const target = targets.get(item)!;
    const failure: ItemFailure = {
      file: error instanceof ItemLoadError ? error.file : undefined,
      message: error instanceof Error ? error.message : String(error),
    };
    if (strict) throw new StartupError("STARTUP_ITEM_FAILED", `${item.kind} ${item.id} failed to load: ${failure.message}`, { cause: error });
    target.failure = failure;
    target.methods = new Map();
    options.serverRoutes.removeItem(item.kind, item.id);
    options.onItemFailed(item);
    log.error({ kind: item.kind, id: item.id, file: failure.file, err: (error as Error)?.cause ?? error }, `${item.kind} ${item.id} failed to load, and answers 503 until it is fixed: ${failure.message}`);
  };

  for (const item of items) {
    const { target, unreadable } = await newTarget(item, config, options.dev);
    targets.set(item, target);
    registry.add(target);
    if (unreadable !== undefined) fail(item, unreadable);
  }
  for (const item of items) {
    const target = targets.get(item)!;
    if (!item.bootHook || target.failure) continue;
    try {
      await runBootHook(item.bootHook, options.bootApi(item, target), options.onWaiting);
    } catch (error) {
      fail(item, error);
    }
  }
  const warn = (message: string) => log.warn(message);
  for (const item of items) {
    const target = targets.get(item)!;
    if (target.failure) continue;
    try {
      target.files = await loadServerFiles(item.serverFiles, item.bootHook, options.onWaiting);
      target.methods = buildMethods(item.kind, item.id, target.files, config.rpc, warn);
    } catch (error) {
      fail(item, error);
    }
  }
  for (const item of items) {
    const failed = targets.get(item)!.failure?.file;
    const entries = item.bootHook ? [item.bootHook, ...item.serverFiles] : item.serverFiles;
    options.serverOnlyFiles.warnUnknownImports(entries.filter((entry) => entry !== failed));
  }
  return registry;
}

/**
 * An item's target, with no files loaded yet; `unreadable` says why its server.json could
 * not be read (the item then fails).
 */
export async function newTarget(item: FoundItem, config: ResolvedConfig, dev: boolean): Promise<{ target: Target; unreadable: ItemLoadError | undefined }> {
  let block: SecureBlock = Object.freeze({});
  let unreadable: ItemLoadError | undefined;
  try {
    block = mergeSecureTiers(await readAuthorConfig(item.dir), config.secureItemConfig(item.kind, item.id));
  } catch (error) {
    unreadable = new ItemLoadError(undefined, error);
  }
  const secure = itemSecure(item.kind, item.id, block, config.rpcVerifierView);
  const target: Target = {
    kind: item.kind,
    id: item.id,
    dir: item.dir,
    files: [],
    methods: new Map(),
    config: config.itemConfig(item.kind, item.id),
    secure,
    facade: createCoreFacade({ dev, secure, domain: config.publicOrigin }),
    failure: undefined,
  };
  return { target, unreadable };
}

async function runBootHook(file: string, api: BootApi, onWaiting?: (what: string) => void): Promise<void> {
  let namespace: Record<string, unknown>;
  onWaiting?.(`the boot hook ${file} to load`);
  try {
    namespace = await importServerFile(file);
  } catch (error) {
    throw new ItemLoadError(file, await explainLoadError(file, error));
  }
  // `register`, else a default export's `register`, else a default function.
  const fallback = namespace.default as { register?: unknown } | ((api: BootApi) => unknown) | undefined;
  const hook = namespace.register ?? (typeof fallback === "object" && fallback !== null ? fallback.register : fallback);
  if (typeof hook !== "function") {
    throw new ItemLoadError(file, new Error("a boot hook must export a function named register"));
  }
  onWaiting?.(`the boot hook ${file} (${api.kind} ${api.id}) to return from register()`);
  try {
    await (hook as (api: BootApi) => unknown)(api);
  } catch (error) {
    throw new ItemLoadError(file, new Error(`register() threw: ${(error as Error)?.message ?? String(error)}`, { cause: error }));
  }
}
