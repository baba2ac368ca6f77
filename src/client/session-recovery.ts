/**
 * The page's session-recovery hook (docs/guides/browser.md "Session recovery"): when a
 * call fails because the viewer's session is gone or its CSRF token no longer matches,
 * `window.AppSessionRecovery.handle({ status, code, message, source })` is called, so the
 * page can reload and get a fresh session instead of every caller handling it alone.
 *
 * The RPC layer reports `RPC_*` refusals and HttpClient reports the proxy's `PROXY_*`
 * refusals in proxy mode. RPC transports are never proxy clients, so the two do not
 * overlap; the set of errors already reported also keeps a transport that itself goes
 * through an RPC call from reporting one failure twice.
 */
import { reportError } from "./report.js";
import { pageSingleton } from "./shared.js";
import type { SessionLossInfo, SessionLossSource } from "./types.js";

/** The codes that mean "this page's session is unusable", per source. */
const SESSION_CODES: Readonly<Record<SessionLossSource, ReadonlySet<string>>> = {
  rpc: new Set(["RPC_NO_SESSION", "RPC_BAD_CSRF"]),
  // The proxy's own refusals, given before it looks at the alias. An upstream's answer
  // passes through unchanged, but only one that copies the code and the status is taken
  // for them.
  proxy: new Set(["PROXY_NO_SESSION", "PROXY_BAD_CSRF"]),
};

// Shared with another copy of the library on the page, which may see the same error.
const reported: WeakSet<object> = pageSingleton("sessionLossReported", () => new WeakSet<object>());

/**
 * Calls the page's hook if `error` is a lost session for `source`. Never throws and
 * never waits: the caller rejects with `error` right after, whatever the hook does.
 */
export function notifySessionLoss(error: unknown, source: SessionLossSource): void {
  if (typeof error !== "object" || error === null) return;
  const { status, code, message } = error as { status?: unknown; code?: unknown; message?: unknown };
  if (typeof code !== "string" || !SESSION_CODES[source].has(code)) return;
  if (source === "proxy" && status !== 401 && status !== 403) return;
  if (reported.has(error)) return;
  reported.add(error);
  const info: SessionLossInfo = {
    status: typeof status === "number" ? status : undefined,
    code,
    message: typeof message === "string" ? message : "",
    source,
  };
  try {
    const recovery = pageHook();
    if (recovery === undefined) return;
    const outcome: unknown = recovery.handle.call(recovery.owner, info);
    if (isThenable(outcome)) outcome.then(undefined, reportError);
  } catch (hookError) {
    reportError(hookError);
  }
}

/**
 * `window.AppSessionRecovery` when the page set it (an own property of the global, so an
 * element with that id does not count) and it has a `handle` function.
 */
function pageHook(): { owner: object; handle: (info: SessionLossInfo) => unknown } | undefined {
  if (!Object.prototype.hasOwnProperty.call(globalThis, "AppSessionRecovery")) return undefined;
  const owner = (globalThis as { AppSessionRecovery?: unknown }).AppSessionRecovery;
  if ((typeof owner !== "object" && typeof owner !== "function") || owner === null) return undefined;
  const handle = (owner as { handle?: unknown }).handle;
  return typeof handle === "function" ? { owner, handle: handle as (info: SessionLossInfo) => unknown } : undefined;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as PromiseLike<unknown>).then === "function";
}
