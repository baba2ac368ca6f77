/**
 * The files below `plugins/` and `modules/` that static serving refuses because server code
 * imports them (docs/reference/http-routes.md). Filled once at start from every server file and boot
 * hook, and again for a server file that dev mode reloads; a request only looks up a Set.
 *
 * A server file whose imports cannot be worked out (esbuild fails on it) must not leave its
 * helpers servable: its item then refuses every file Node could load as code or data, and,
 * once the file has loaded (one that fails has its own error), a warning names it and the cause.
 */
import { realpath, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Logger } from "../log/logger.js";
import { importGraph, type ImportGraph } from "./server-imports.js";

/** What a server file could import and a browser might fetch as an asset. */
const LOADABLE = /\.(?:[cm]?js|json|node|wasm|[jt]sx)$/i;

export class ServerOnlyFiles {
  readonly #log: Logger;
  /** Real paths of every file some server file imports. Only grows: a file dropped from a
   * reloaded server file's imports may still sit in the module cache until a restart. */
  readonly #imported = new Set<string>();
  /** Server files whose imports are not known, with the real path of their item folder. */
  readonly #unknown = new Map<string, string>();
  /** Of those, the ones not yet warned about (track() → warnUnknownImports()), with why. */
  readonly #unexplained = new Map<string, { itemDir: string; reason: string }>();
  /** The item folders (real paths) with at least one such server file. */
  #lockedItems = new Set<string>();
  /** Whether the disk ignores case, found out on the first item; paths are then kept and
   * looked up lower-cased, or `X.JS` would serve what `x.js` refuses. */
  #caseInsensitive: Promise<boolean> | undefined = undefined;
  #foldCase = false;

  constructor(log: Logger) {
    this.#log = log;
  }

  /**
   * Works out what each of `entries` (server files and boot hooks of the item in `itemDir`)
   * imports; returns each one's graph (dev reloads keep its edges).
   */
  async track(itemDir: string, entries: readonly string[]): Promise<Map<string, ImportGraph>> {
    const realItemDir = await realpath(itemDir).catch(() => itemDir);
    this.#foldCase = await (this.#caseInsensitive ??= caseInsensitiveDisk(realItemDir));
    const graphs = new Map<string, ImportGraph>();
    await Promise.all(
      entries.map(async (entry) => {
        const graph = await importGraph(entry);
        graphs.set(entry, graph);
        for (const file of graph.files) this.#imported.add(this.#key(await realpath(file).catch(() => file)));
        if (graph.error === undefined) {
          this.#unknown.delete(entry);
          this.#unexplained.delete(entry);
        } else {
          this.#unknown.set(entry, this.#key(realItemDir));
          this.#unexplained.set(entry, { itemDir, reason: graph.error });
        }
      }),
    );
    this.#lockedItems = new Set(this.#unknown.values());
    return graphs;
  }

  /**
   * Warns about the entries among `loaded` whose imports could not be worked out. Called
   * once they have loaded: a file that fails to load has its own error (the same syntax
   * error, as a rule), and a second, vaguer line about its imports only sent readers astray.
   */
  warnUnknownImports(loaded: Iterable<string>): void {
    for (const entry of loaded) {
      const unexplained = this.#unexplained.get(entry);
      if (unexplained === undefined) continue;
      this.#unexplained.delete(entry);
      this.#log.warn(
        { file: entry, reason: unexplained.reason },
        `cannot work out what ${entry} imports: no .js, .mjs, .cjs, .json, .jsx, .tsx, .node or .wasm file of ${unexplained.itemDir} is served`,
      );
    }
  }

  /** True when `realFile`, served from the item whose real folder is `realItemDir`, must answer 404. */
  refuses(realFile: string, realItemDir: string): boolean {
    if (this.#imported.has(this.#key(realFile))) return true;
    return this.#lockedItems.size > 0 && this.#lockedItems.has(this.#key(realItemDir)) && LOADABLE.test(realFile);
  }

  #key(realPath: string): string {
    return this.#foldCase ? realPath.toLowerCase() : realPath;
  }
}

/**
 * True when the disk holding `realDir` ignores case: the folder's name with its case
 * swapped is the same folder. A name without letters cannot tell; the platform's usual
 * disk decides then (macOS and Windows ignore case).
 */
async function caseInsensitiveDisk(realDir: string): Promise<boolean> {
  const name = basename(realDir);
  const swapped = [...name].map((char) => (char === char.toLowerCase() ? char.toUpperCase() : char.toLowerCase())).join("");
  if (swapped === name) return process.platform === "darwin" || process.platform === "win32";
  try {
    const [same, other] = await Promise.all([stat(realDir), stat(join(dirname(realDir), swapped))]);
    return same.dev === other.dev && same.ino === other.ino;
  } catch {
    return false;
  }
}
