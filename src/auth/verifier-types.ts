/**
 * What verifiers are: functions a plugin registers from its boot hook (docs/guides/server-methods.md "Exposing a
 * method: authentication", docs/guides/proxy.md "Verifiers"). Both kinds pass by returning `true`
 * or `{ ok: true, user? }`, and fail by returning anything else or throwing; one runner
 * (run-verifiers.ts) applies that rule to RPC calls and proxied requests alike.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ProxyConfig, VerifierContext } from "../config/schema.js";
import type { CoreFacade } from "../core/facade.js";

export type VerifierResult = boolean | { ok: boolean; user?: unknown } | null | undefined;

export interface RpcVerifierInput {
  req: IncomingMessage;
  res: ServerResponse;
  /** A frozen view of the server for plugin code (docs/guides/server-methods.md "Exposing a method: authentication"). */
  core: CoreFacade;
  contextId: string | undefined;
  context: VerifierContext;
  verifierName: string;
  verifierConfig: Record<string, unknown>;
  kind: string;
  id: string;
  method: string;
}

/** Kept as its own name for method authors' types. */
export type RpcVerifierResult = VerifierResult;
export type RpcVerifier = (input: RpcVerifierInput) => VerifierResult | Promise<VerifierResult>;

export interface UpstreamState {
  /** Sent upstream; a verifier may change it. Keys arrive lowercased. */
  headers: Record<string, string>;
  /** The path below the alias as the client sent it (still percent-encoded), with its query. */
  targetPath: string;
}

export interface ProxyVerifierInput {
  req: IncomingMessage & { user?: unknown };
  res: ServerResponse;
  core: CoreFacade;
  alias: string;
  proxyConfig: ProxyConfig;
  upstream: UpstreamState;
  verifierName: string;
  /** This verifier's settings for the alias; `{}` when the alias lists verifiers by name only. */
  verifierConfig: Record<string, unknown>;
}

export type ProxyVerifier = (input: ProxyVerifierInput) => VerifierResult | Promise<VerifierResult>;

/**
 * Whether viewer auth is enforced: `auth.enabled` when it is set; otherwise on as soon as
 * verifiers are listed, so that forgetting `enabled` never leaves a listed check unrun.
 */
export function proxyAuthEnabled(proxyConfig: ProxyConfig): boolean {
  const auth = proxyConfig.auth;
  if (!auth) return false;
  if (auth.enabled !== undefined) return auth.enabled;
  return proxyVerifierSettings(proxyConfig).length > 0;
}

/**
 * An alias's verifiers in order, each with its settings: `auth.verifiers` is a list of names
 * (settings `{}`) or a map name → settings (own keys only, in the order written).
 */
export function proxyVerifierSettings(proxyConfig: ProxyConfig): Array<[string, Record<string, unknown>]> {
  const listed = proxyConfig.auth?.verifiers;
  if (listed === undefined) return [];
  if (Array.isArray(listed)) return listed.map((name) => [name, {}]);
  return Object.keys(listed).map((name) => [name, listed[name]!]);
}
