/**
 * Proxy verifier types (docs/proxy.md "Verifiers"). A verifier is called with
 * `{ req, res, core, alias, proxyConfig, upstream }` and passes by returning true.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ProxyConfig } from "../config/schema.js";

export interface UpstreamState {
  /** Sent upstream; a verifier may change it. Keys arrive lowercased. */
  headers: Record<string, string>;
  /** The path below the alias as the client sent it (still percent-encoded), with its query. */
  targetPath: string;
}

export interface ProxyVerifierInput {
  req: IncomingMessage & { user?: unknown };
  res: ServerResponse;
  core: unknown;
  alias: string;
  proxyConfig: ProxyConfig;
  upstream: UpstreamState;
}

export type ProxyVerifier = (input: ProxyVerifierInput) => boolean | Promise<boolean>;

/**
 * Whether viewer auth is enforced: `auth.enabled` when it is set; otherwise on as soon as
 * verifiers are listed, so that forgetting `enabled` never leaves a listed check unrun.
 */
export function proxyAuthEnabled(proxyConfig: ProxyConfig): boolean {
  const auth = proxyConfig.auth;
  if (!auth) return false;
  if (auth.enabled !== undefined) return auth.enabled;
  return (auth.verifiers?.length ?? 0) > 0;
}
