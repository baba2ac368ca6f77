/**
 * Proxy verifier types (SPEC "Authentication / Proxy"). A verifier is called with
 * `{ req, res, core, alias, proxyConfig, upstream }` and passes by returning true.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ProxyConfig } from "../config/schema.js";

export interface UpstreamState {
  /** Sent upstream; a verifier may change it. */
  headers: Record<string, string>;
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
