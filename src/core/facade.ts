/**
 * What plugin code is shown of the server it runs in, as `ctx.core` (and verifiers'
 * `core`): a frozen object of plain values, never the server's own state (its session
 * signer, registries or logger). One per plugin or module, made once at start, because
 * `server.secure` is that item's own secure config.
 *
 * The same values are reachable as `core.server` and, for code written for xOpat, as
 * `core.CORE.server` (docs/guides/xopat.md).
 */
import type { ItemSecure } from "../config/secure-config.js";

export interface CoreServerFacade {
  /** True when the server runs with `--dev`. */
  readonly devMode: boolean;
  /** `ctx.secure` of the item this facade belongs to. */
  readonly secure: ItemSecure;
}

export interface CoreClientFacade {
  /** `server.publicOrigin`, or "" when it is not configured. */
  readonly domain: string;
}

export interface CoreFacade {
  readonly server: CoreServerFacade;
  readonly client: CoreClientFacade;
  readonly CORE: { readonly server: CoreServerFacade; readonly client: CoreClientFacade };
}

export function createCoreFacade(options: { dev: boolean; secure: ItemSecure; domain: string | null }): CoreFacade {
  const server = Object.freeze({ devMode: options.dev, secure: options.secure });
  const client = Object.freeze({ domain: options.domain ?? "" });
  return Object.freeze({ server, client, CORE: Object.freeze({ server, client }) });
}
