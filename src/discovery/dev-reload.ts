/**
 * Dev mode only (docs/guides/server-methods.md "Dev mode"): before a call, the server files of its plugin or
 * module are brought up to date with the disk, so that an edit takes effect without a
 * restart.
 *
 * - An edited file, server file or helper, is found by its mtime and size (module-graph.ts),
 *   and the server files that import it, directly or not, are loaded again with a fresh
 *   instance of it and of the files between them (a new URL version: Node caches modules
 *   by URL). What the reloaded files import is worked out again before they load, so that
 *   a helper they start importing is never served.
 * - A call to a method or an item nobody knows yet rescans the item's folder, or the
 *   plugin and module folders, and loads the new server files (rescan-gate.ts bounds it).
 *   An item added while the server runs is loaded without its boot hook only if it has
 *   none: boot hooks register verifiers and routes, which the start checked as a whole
 *   (a verifier context naming a verifier nobody registered stops the start), so one added
 *   late fails its item until a restart, and the log says so.
 *
 * A file that fails to load keeps its previous version (none, for a new file) and the log
 * says why (load-error.ts); it is tried again once it, or a file it imports, is edited.
 */
import type { ResolvedConfig } from "../config/resolve.js";
import type { Logger } from "../log/logger.js";
import { newTarget } from "./discover.js";
import { setModuleVersions } from "./import-server-file.js";
import { isFile } from "./is-file.js";
import { buildMethods, loadServerFile } from "./load-target.js";
import type { ModuleGraph } from "./module-graph.js";
import type { Registry, ServerFile, Target } from "./registry.js";
import { RescanGate } from "./rescan-gate.js";
import { scanItem, scanRoot, type FoundItem } from "./scan.js";
import type { ServerOnlyFiles } from "./server-only-files.js";

/** Rescans start at most this often per folder: cheap (a few readdir calls), but a flood of calls to a misspelt name should not turn into a flood of them. */
const RESCAN_INTERVAL_MS = 100;

export interface DevReloadOptions {
  root: string;
  registry: Registry;
  serverOnlyFiles: ServerOnlyFiles;
  moduleGraph: ModuleGraph;
  config: ResolvedConfig;
  log: Logger;
  /** Makes a target found while the server runs part of this server (its `core`, importServerModule). */
  adopt(target: Target): void;
  /** Called each time a target's method table is built anew, for what the server binds to its methods. */
  methodsBuilt(target: Target): void;
}

export class DevReload {
  readonly #options: DevReloadOptions;
  readonly #refreshing = new WeakMap<Target, Promise<void>>();
  /** One change to a target's files at a time: a reload and a rescan of one item would each write back what they read. */
  readonly #changing = new WeakMap<Target, Promise<unknown>>();
  /** One look at the disk at a time: two calls that both find a shared helper edited would load it twice. */
  #updating: Promise<unknown> = Promise.resolve();
  readonly #itemScans = new WeakMap<Target, RescanGate>();
  readonly #rootScan = new RescanGate(RESCAN_INTERVAL_MS);
  /** Boot hooks that appeared in a running item: reported once, never run. */
  readonly #lateBootHooks = new Set<string>();

  constructor(options: DevReloadOptions) {
    this.#options = options;
  }

  /** Reloads what was edited among the target's server files and their imports. */
  refresh(target: Target): Promise<void> {
    const pending = this.#refreshing.get(target);
    if (pending) return pending;
    const run = this.#exclusive(target, () => this.#reloadEdited(target)).finally(() => this.#refreshing.delete(target));
    this.#refreshing.set(target, run);
    return run;
  }

  /** For a call to a method the target does not have: loads server files added to its folder since. */
  findNewFiles(target: Target): Promise<void> {
    let gate = this.#itemScans.get(target);
    if (!gate) this.#itemScans.set(target, (gate = new RescanGate(RESCAN_INTERVAL_MS)));
    return gate.run(() => this.#exclusive(target, () => this.#loadNewFiles(target)));
  }

  /** For a call to a plugin or module nobody knows: adds the items created since. */
  findNewItems(): Promise<void> {
    return this.#rootScan.run(() => this.#loadNewItems());
  }

  #exclusive(target: Target, change: () => Promise<void>): Promise<void> {
    const run = (this.#changing.get(target) ?? Promise.resolve()).catch(() => {}).then(change);
    this.#changing.set(target, run);
    return run;
  }

  /** Gives what was edited among `paths`' imports its next version, in this thread's loader too. */
  #updateVersions(paths: readonly string[]): Promise<void> {
    const run = this.#updating.catch(() => {}).then(async () => setModuleVersions(await this.#options.moduleGraph.update(paths)));
    this.#updating = run;
    return run;
  }

  async #reloadEdited(target: Target): Promise<void> {
    const { moduleGraph, log } = this.#options;
    await this.#updateVersions(target.files.map((file) => file.path));
    const outdated = target.files.filter((file) => moduleGraph.versionOf(file.path) !== file.version);
    // A deleted server file has nothing to load (and working out its imports would fail,
    // refusing its item's code files): its methods stay until a restart.
    const stale = outdated.filter((file) => isFile(file.path));
    for (const file of outdated.filter((item) => !stale.includes(item))) {
      await setModuleVersions([moduleGraph.revert(file.path, file.version)]);
      log.warn({ file: file.path }, `${file.path} was deleted: its methods stay until a restart`);
    }
    if (stale.length === 0) return;
    await this.#track(target.dir, stale.map((file) => file.path));
    const files = [...target.files];
    let changed = false;
    for (const file of stale) {
      const loaded = await this.#load(file.path, file.bootHook);
      if (loaded) {
        files[files.indexOf(file)] = loaded;
        changed = true;
        log.info({ file: file.path }, "server file reloaded");
      } else {
        await setModuleVersions([moduleGraph.revert(file.path, file.version)]);
      }
    }
    if (changed) this.#rebuild(target, files, "reloaded server files conflict; keeping the previous methods");
  }

  async #loadNewFiles(target: Target): Promise<void> {
    if (target.failure) return;
    let found: FoundItem;
    try {
      found = await scanItem(target.kind as FoundItem["kind"], target.id, target.dir);
    } catch (error) {
      this.#options.log.error({ err: error }, `cannot look for new server files of ${target.kind} ${target.id}: ${(error as Error).message}`);
      return;
    }
    const known = new Set(target.files.map((file) => file.path));
    if (found.bootHook && !known.has(found.bootHook) && !this.#lateBootHooks.has(found.bootHook)) {
      this.#lateBootHooks.add(found.bootHook);
      this.#options.log.warn({ file: found.bootHook }, `${found.bootHook} is new: a boot hook runs only at start, so restart the server to run it`);
    }
    const added = found.serverFiles.filter((file) => !known.has(file));
    if (added.length === 0) return;
    const { files, loaded } = await this.#loadAdded(target.dir, added);
    if (this.#rebuild(target, [...target.files, ...files], `the new server files of ${target.kind} ${target.id} conflict with its others; they are left out`)) {
      for (const path of loaded) this.#options.log.info({ file: path }, "new server file loaded");
    }
  }

  async #loadNewItems(): Promise<void> {
    const { registry, log, config } = this.#options;
    let items: FoundItem[];
    try {
      items = await scanRoot(this.#options.root, (kind, id) => registry.target(kind, id) !== undefined);
    } catch (error) {
      log.error({ err: error }, `cannot look for new plugins and modules: ${(error as Error).message}`);
      return;
    }
    for (const item of items) {
      const { target, unreadable } = await newTarget(item, config, true);
      this.#options.adopt(target);
      this.#options.methodsBuilt(target);
      if (unreadable !== undefined || item.bootHook !== undefined) {
        const message = unreadable?.message ?? `${item.kind} ${item.id} was added while the server runs and has a boot hook, which runs only at start: restart the server to load it`;
        target.failure = { file: unreadable === undefined ? item.bootHook : undefined, message };
        registry.add(target);
        log.warn({ kind: item.kind, id: item.id }, `${item.kind} ${item.id} answers 503 until a restart: ${message}`);
        continue;
      }
      const { files } = await this.#loadAdded(item.dir, item.serverFiles);
      const loaded = this.#rebuild(target, files, `the server files of ${item.kind} ${item.id} conflict; it has no methods until that is fixed`);
      registry.add(target);
      if (loaded) log.info({ kind: item.kind, id: item.id, methods: [...target.methods.keys()] }, `new ${item.kind} ${item.id} loaded`);
    }
  }

  /** New server files, and the paths of those that loaded; one that fails is kept with no methods, to be tried again once edited. */
  async #loadAdded(dir: string, paths: readonly string[]): Promise<{ files: ServerFile[]; loaded: string[] }> {
    await this.#track(dir, paths);
    // A file seen before (its methods conflicted, so it was left out) may have been edited since.
    await this.#updateVersions(paths);
    const files: ServerFile[] = [];
    const loaded: string[] = [];
    for (const path of paths) {
      const file = await this.#load(path, false);
      if (file) loaded.push(path);
      files.push(file ?? { path, mtimeMs: 0, version: undefined, bootHook: false, functions: new Map(), policies: new Map() });
    }
    return { files, loaded };
  }

  /** Works out what the files import (refused to browsers from now on) before any of it loads. */
  async #track(dir: string, paths: readonly string[]): Promise<void> {
    const graphs = await this.#options.serverOnlyFiles.track(dir, paths);
    for (const [entry, graph] of graphs) await this.#options.moduleGraph.record(entry, graph);
  }

  async #load(path: string, bootHook: boolean): Promise<ServerFile | undefined> {
    const { moduleGraph, log } = this.#options;
    try {
      const file = await loadServerFile(path, moduleGraph.versionOf(path), bootHook);
      this.#options.serverOnlyFiles.warnUnknownImports([path]);
      const versions = moduleGraph.versionsFor(path);
      return versions.length > 0 ? { ...file, moduleVersions: versions } : file;
    } catch (error) {
      const reason = (error as Error).message;
      // A reason that starts with the file's own place names it already.
      const where = reason.startsWith(`${path}:`) ? reason : `${path}: ${reason}`;
      log.error({ err: error, file: path }, `server file failed to load, keeping its previous version: ${where}`);
      return undefined;
    }
  }

  /** False when two files export one method: the target then keeps its files and methods. */
  #rebuild(target: Target, files: ServerFile[], conflict: string): boolean {
    try {
      target.methods = buildMethods(target.kind, target.id, files, this.#options.config.rpc, (message) => this.#options.log.warn(message));
      target.files = files;
      this.#options.methodsBuilt(target);
      return true;
    } catch (error) {
      this.#options.log.error({ err: error }, `${conflict}: ${(error as Error).message}`);
      return false;
    }
  }
}
