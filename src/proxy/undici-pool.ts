/**
 * undici's `Pool`, without the rest of undici.
 *
 * `import { Pool } from "undici"` runs undici's index, which also loads fetch, WebSocket,
 * EventSource, the HTTP cache and the mock agents: about 7 MB of resident memory that
 * the proxy never uses, in a process whose budget while streaming a large file is 150 MB
 * (bench/proxy.mjs). undici publishes no `exports` map, so its dispatcher module can be
 * required on its own. Should a later undici move that file, the index is the fallback:
 * the proxy then costs the memory again but keeps working, and
 * test/proxy/undici-pool.test.ts fails so that we notice.
 *
 * The type promises only what a Pool has without the index: it is the index that adds
 * `request`, `stream`, `pipeline`, `connect` and `upgrade` to every dispatcher, so those
 * would exist or not depending on whether something else had loaded it first.
 */
import { createRequire } from "node:module";
import type { Pool as UndiciPool } from "undici";

const require = createRequire(import.meta.url);

/** The module path of undici's Pool inside the package; exported for the test. */
export const POOL_MODULE = "undici/lib/dispatcher/pool.js";

/** What the proxy uses of a Pool. */
export type Pool = Pick<UndiciPool, "dispatch" | "close" | "destroy">;
type PoolClass = new (origin: string, options?: UndiciPool.Options) => Pool;

function loadPool(): PoolClass {
  try {
    return require(POOL_MODULE) as PoolClass;
  } catch {
    return (require("undici") as typeof import("undici")).Pool;
  }
}

let poolClass: PoolClass | undefined;

/**
 * A Pool made at its first dispatch, so that undici's pool module (about 1 MB resident) is
 * loaded by the first proxied request rather than at start: a server whose proxy aliases
 * are configured but not used, like the demo, never loads it. The load is a synchronous
 * require of files on disk, once per process.
 */
export class LazyPool {
  readonly #origin: string;
  readonly #options: UndiciPool.Options;
  #pool: Pool | undefined;

  constructor(origin: string, options: UndiciPool.Options) {
    this.#origin = origin;
    this.#options = options;
  }

  dispatch(...args: Parameters<Pool["dispatch"]>): boolean {
    poolClass ??= loadPool();
    this.#pool ??= new poolClass(this.#origin, this.#options);
    return this.#pool.dispatch(...args);
  }

  async close(): Promise<void> {
    await this.#pool?.close();
  }

  async destroy(): Promise<void> {
    await this.#pool?.destroy();
  }
}
