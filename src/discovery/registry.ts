/**
 * What discovery found: plugins and modules by id, and their methods by name. All maps are
 * `Map`s so that a URL naming `__proto__`, `constructor` or `toString` finds nothing.
 */
import type { ResolvedPolicy } from "./policy.js";

export type TargetKind = "plugin" | "module" | "server";

/** A method as the RPC gateway sees it. */
export interface MethodEntry {
  kind: TargetKind;
  id: string;
  name: string;
  /** `kind/id/name`: the default concurrency key and the log identity. */
  key: string;
  fn: (...args: unknown[]) => unknown;
  policy: ResolvedPolicy;
  /** The file that exports it (absent for built-in server methods). */
  file: string | undefined;
  /** The file's mtime when loaded: isolation workers re-import an edited file by it. */
  fileVersion: number;
}

export interface ServerFile {
  path: string;
  mtimeMs: number;
  /** Function exports other than `policy`, by name. */
  functions: Map<string, (...args: unknown[]) => unknown>;
  policies: Map<string, import("./policy.js").MethodPolicy>;
}

export interface Target {
  kind: TargetKind;
  id: string;
  dir: string;
  files: ServerFile[];
  methods: Map<string, MethodEntry>;
  /** This plugin's or module's section of the config. */
  config: unknown;
}

export class Registry {
  readonly #targets = new Map<TargetKind, Map<string, Target>>([
    ["plugin", new Map()],
    ["module", new Map()],
    ["server", new Map()],
  ]);

  add(target: Target): void {
    this.#targets.get(target.kind)!.set(target.id, target);
  }

  /** `kind` comes from the URL: anything but the three known kinds finds nothing. */
  target(kind: string, id: string): Target | undefined {
    return this.#targets.get(kind as TargetKind)?.get(id);
  }

  all(): Target[] {
    return [...this.#targets.values()].flatMap((targets) => [...targets.values()]);
  }
}
