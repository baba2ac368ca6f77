/**
 * Dev mode: which files each server file imports (the edges server-imports.ts finds), what
 * each file looked like when it was loaded (mtime and size), and the version each edited
 * file and its importers are loaded at.
 *
 * An edit to a file gives it, and every file that imports it on the way up to the server
 * files (by any path), the next version; files nobody edited keep theirs. Importing that
 * version's URL (import-server-file.ts) makes Node load a fresh instance of exactly that
 * chain: the edited helper runs again, once per version however many server files import
 * it, and an unedited helper beside it keeps its state (a connection pool, a cache).
 */
import { realpath, stat } from "node:fs/promises";
import type { ImportGraph } from "./server-imports.js";

/** What is compared: a file rewritten within one mtime tick mostly changes its size. */
type Signature = string;

interface EntryGraph {
  /** The server file's real path: versions are kept by real path, as Node keys modules. */
  real: string;
  /** Real paths of everything it loads, itself included. */
  files: string[];
  /** False when esbuild could not finish the graph: its edges are then unknown. */
  complete: boolean;
}

export type VersionUpdate = readonly [file: string, version: number | null];

export class ModuleGraph {
  /** Real path → the real paths it imports. */
  readonly #imports = new Map<string, readonly string[]>();
  /** Server file (as discovered) → its graph. */
  readonly #entries = new Map<string, EntryGraph>();
  readonly #seen = new Map<string, Signature>();
  readonly #versions = new Map<string, number>();
  #generation = 0;

  /** Takes a server file's graph as just worked out; a file seen for the first time is taken as it is now on disk. */
  async record(entry: string, graph: ImportGraph): Promise<void> {
    const real = await realpath(entry).catch(() => entry);
    const files = [...new Set(await Promise.all([...graph.files, entry].map((file) => realpath(file).catch(() => file))))];
    for (const [file, imports] of graph.imports) this.#imports.set(file, imports);
    this.#entries.set(entry, { real, files, complete: graph.error === undefined });
    await Promise.all(files.filter((file) => !this.#seen.has(file)).map(async (file) => this.#seen.set(file, await signatureOf(file))));
  }

  /** The version a server file should be loaded at: undefined until it, or something it imports, is edited. */
  versionOf(entry: string): number | undefined {
    return this.#versions.get(this.#entries.get(entry)?.real ?? entry);
  }

  /** The versions of the files `entry` imports, for an isolation worker to load the same instances. */
  versionsFor(entry: string): Array<[string, number]> {
    const files = this.#entries.get(entry)?.files ?? [];
    return files.flatMap((file) => {
      const version = this.#versions.get(file);
      return version === undefined ? [] : [[file, version] as [string, number]];
    });
  }

  /**
   * Looks at every file the server files `entries` import; for the ones edited since,
   * gives them and all their importers the next version. Returns the changed versions,
   * for the loader (setModuleVersions) to apply before anything is imported again.
   */
  async update(entries: Iterable<string>): Promise<VersionUpdate[]> {
    const files = new Set<string>();
    for (const entry of entries) for (const file of this.#entries.get(entry)?.files ?? []) files.add(file);
    const edited: string[] = [];
    await Promise.all(
      [...files].map(async (file) => {
        const signature = await signatureOf(file);
        if (signature === this.#seen.get(file)) return;
        this.#seen.set(file, signature);
        edited.push(file);
      }),
    );
    if (edited.length === 0) return [];
    this.#generation += 1;
    const renewed = this.#importersOf(edited);
    // Without edges, all of an unfinished graph that holds an edited file is renewed.
    for (const graph of this.#entries.values()) {
      if (!graph.complete && graph.files.some((file) => renewed.has(file))) for (const file of graph.files) renewed.add(file);
    }
    for (const file of renewed) this.#versions.set(file, this.#generation);
    return [...renewed].map((file) => [file, this.#generation] as const);
  }

  /**
   * A server file whose new version failed to load stays at the version it runs (`loaded`),
   * and is tried again after its next edit or its helpers'; returns the update to apply.
   */
  revert(entry: string, loaded: number | undefined): VersionUpdate {
    const real = this.#entries.get(entry)?.real ?? entry;
    if (loaded === undefined) this.#versions.delete(real);
    else this.#versions.set(real, loaded);
    return [real, loaded ?? null];
  }

  /** `files` and every file that imports one of them, directly or not. */
  #importersOf(files: readonly string[]): Set<string> {
    const importers = new Map<string, string[]>();
    for (const [file, imports] of this.#imports) {
      for (const imported of imports) {
        const list = importers.get(imported);
        if (list) list.push(file);
        else importers.set(imported, [file]);
      }
    }
    const found = new Set(files);
    const queue = [...files];
    while (queue.length > 0) {
      for (const importer of importers.get(queue.pop()!) ?? []) {
        if (found.has(importer)) continue;
        found.add(importer);
        queue.push(importer);
      }
    }
    return found;
  }
}

async function signatureOf(file: string): Promise<Signature> {
  try {
    const info = await stat(file);
    return `${info.mtimeMs}:${info.size}`;
  } catch {
    return "missing";
  }
}
