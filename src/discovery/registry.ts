/**
 * What discovery found: plugins and modules by id, and their methods by name. All maps are
 * `Map`s so that a URL naming `__proto__`, `constructor` or `toString` finds nothing.
 */
import type { ItemSecure } from "../config/secure-config.js";
import type { CoreFacade } from "../core/facade.js";
import type { HttpError } from "../errors/http-error.js";
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
  /**
   * False when its code cannot read `ctx.session` (./session-use.ts): its calls load no
   * session data. Decided when the method is loaded.
   */
  usesSession: boolean;
  /**
   * The step of a method with a `rateLimit`, given to it when it is loaded
   * (src/runtime/rate-limit.ts `RateLimits.bind`); absent without one.
   */
  rateLimitStep?: MethodRateLimit;
  /** The file that exports it (absent for built-in server methods). */
  file: string | undefined;
  /** The cache-busting version the file was loaded with (set by dev reloads): isolation workers import the same one. */
  fileVersion: number | undefined;
  /** Dev reloads: the versions of the helpers the file was loaded with (module-graph.ts), for isolation workers to load the same. */
  moduleVersions?: ReadonlyArray<[string, number]>;
}

/** A method's rate limits as the gateway runs them (docs/guides/server-methods.md "Rate limits"). */
export interface MethodRateLimit {
  /** True when some limit is checked before the body is read. */
  readonly early: boolean;
  /** True when some limit has `key: "user"`, checked once the verifiers have run. */
  readonly late: boolean;
  /** Null when the call is admitted, else the 429 to answer; at once when every limit counts in this process. */
  check(late: boolean, session: string | null, ip: string, user: string | null): HttpError | null | Promise<HttpError | null>;
}

export interface ServerFile {
  path: string;
  mtimeMs: number;
  /** The cache-busting version it was imported with (dev reloads), so every import of it gets this instance. */
  version: number | undefined;
  /** The versions of what it imports that it was loaded with (dev reloads). */
  moduleVersions?: ReadonlyArray<[string, number]>;
  /** The item's `register.server.*`: only its policy-listed functions are methods, never `register`. */
  bootHook: boolean;
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
  /** `ctx.secure` of its methods and routes. */
  secure: ItemSecure;
  /** `ctx.core` of its methods and routes. */
  facade: CoreFacade;
  /** Set when the item failed to load: every call to it answers 503 RPC_TARGET_UNAVAILABLE. */
  failure: ItemFailure | undefined;
}

export interface ItemFailure {
  /** The file that failed, when one did. */
  file: string | undefined;
  message: string;
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

  /** Plugins and modules that failed to load, for getStatus. */
  failed(): Array<{ kind: TargetKind; id: string; file: string | undefined; message: string }> {
    return this.all().flatMap((target) => (target.failure ? [{ kind: target.kind, id: target.id, ...target.failure }] : []));
  }

  /** The loaded version of a server file, if any target has it. */
  fileVersion(path: string): number | undefined {
    for (const target of this.all()) {
      for (const file of target.files) if (file.path === path) return file.version;
    }
    return undefined;
  }

  all(): Target[] {
    return [...this.#targets.values()].flatMap((targets) => [...targets.values()]);
  }
}
