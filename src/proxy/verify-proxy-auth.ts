/**
 * `verifyProxyAuth` (docs/proxy.md "`verifyProxyAuth`"): runs a proxy's verifiers in
 * `all` or `any` mode. A verifier passes by returning exactly `true`; returning anything
 * else or throwing fails it, and the reason goes to the log, never to the client.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ProxyConfig } from "../config/schema.js";
import type { ServerCore } from "../server/core.js";
import { proxyAuthEnabled, type UpstreamState } from "./verifiers.js";

/** The proxy route records each request's id here, so a refusal in the log names it. */
export const proxyRequestIds = new WeakMap<IncomingMessage, string>();

/**
 * True when the request may go upstream: auth is off for this proxy, or its verifiers
 * passed (their changes to `upstreamState.headers` are kept). False when it must be
 * answered 401 `PROXY_AUTH_FAILED`; the caller answers.
 */
export async function verifyProxyAuth(
  req: IncomingMessage & { user?: unknown },
  res: ServerResponse,
  core: ServerCore,
  alias: string,
  proxyConfig: ProxyConfig,
  upstreamState: UpstreamState,
): Promise<boolean> {
  if (!proxyAuthEnabled(proxyConfig)) return true;
  const names = proxyConfig.auth?.verifiers ?? [];
  // Start-up refuses this; a caller building its own config gets a refusal, not a pass.
  if (names.length === 0) return false;
  const any = proxyConfig.auth?.mode === "any";
  if (names.includes("jwt")) stripJwtIdentity(core, proxyConfig, upstreamState.headers);
  for (const name of names) {
    const passed = await runOne(name, { req, res, core, alias, proxyConfig, upstream: upstreamState });
    if (passed && any) return true;
    if (!passed && !any) return false;
  }
  return !any;
}

/**
 * Before any verifier runs, the headers the `jwt` verifier vouches for are taken from
 * the client's request: the identity header (`userClaimHeader`) and `Authorization`. The
 * verifier puts them back only when the token passed, so in `any` mode a request let in
 * by another verifier can carry neither a forged identity nor an unchecked token upstream.
 */
function stripJwtIdentity(core: ServerCore, proxyConfig: ProxyConfig, headers: Record<string, string>): void {
  const userClaimHeader = (proxyConfig.auth?.jwt?.userClaimHeader ?? core.config.jwt.userClaimHeader)?.toLowerCase();
  for (const key of Object.keys(headers)) {
    const name = key.toLowerCase();
    if (name === "authorization" || name === userClaimHeader) delete headers[key];
  }
}

async function runOne(
  name: string,
  input: { req: IncomingMessage; res: ServerResponse; core: ServerCore; alias: string; proxyConfig: ProxyConfig; upstream: UpstreamState },
): Promise<boolean> {
  const { core, alias } = input;
  const reqId = proxyRequestIds.get(input.req);
  const verifier = core.proxyVerifiers.get(name);
  if (!verifier) {
    core.log.error({ reqId, alias, verifier: name }, "proxy verifier is not registered");
    return false;
  }
  try {
    if ((await verifier(input)) === true) return true;
    core.log.info({ reqId, alias, verifier: name }, "proxy verifier refused the request");
  } catch (error) {
    const reason = (error as Error)?.message ?? String(error);
    const code = (error as { code?: unknown })?.code;
    core.log.info({ reqId, alias, verifier: name, reason, ...(typeof code === "string" ? { reasonCode: code } : {}) }, "proxy verifier refused the request");
  }
  return false;
}
