/**
 * The 401 refresh (docs/guides/browser.md, "The 401 refresh flow"): raise
 * `requestSecretUpdate` with `{ type, contextId }` on the secret store for each auth
 * type, then wait for the `secret-updated` that the login client's `setSecret` raises,
 * but only when someone listened to the request.
 *
 * Refreshes are shared per store, context and type: ten requests failing together with
 * an expired token make the login client refresh once, not ten times.
 */
import { APP_USER_EVENTS } from "./app-user.js";
import { pageSingleton } from "./shared.js";
import type { SecretStore } from "./types.js";

export const DEFAULT_REFRESH_TIMEOUT_MS = 20_000;

type EventStore = SecretStore & Required<Pick<SecretStore, "addHandler" | "removeHandler" | "raiseEvent">>;

const pending: WeakMap<object, Map<string, Promise<boolean>>> = pageSingleton("pendingRefreshes", () => new WeakMap());

export function canRefresh(store: SecretStore): store is EventStore {
  return (
    typeof store.addHandler === "function" &&
    typeof store.removeHandler === "function" &&
    typeof store.raiseEvent === "function"
  );
}

/**
 * Resolves true as soon as a new secret arrives for any of `types`, false when none
 * arrives within `timeoutMs`; rejects with the signal's reason if the caller aborts.
 */
export function awaitSecretRefresh(
  store: EventStore,
  types: readonly string[],
  contextId: string | undefined,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  if (types.length === 0) return Promise.resolve(false);
  const refreshes = types.map((type) => sharedRefresh(store, type, contextId, timeoutMs));
  return new Promise<boolean>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let left = refreshes.length;
    const onAbort = (): void => reject(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    const settle = (value: boolean): void => {
      signal?.removeEventListener("abort", onAbort);
      resolve(value);
    };
    for (const refresh of refreshes) {
      void refresh.then((updated) => {
        left -= 1;
        if (updated) settle(true);
        else if (left === 0) settle(false);
      });
    }
  });
}

function sharedRefresh(store: EventStore, type: string, contextId: string | undefined, timeoutMs: number): Promise<boolean> {
  let forStore = pending.get(store);
  if (forStore === undefined) {
    forStore = new Map();
    pending.set(store, forStore);
  }
  const key = JSON.stringify([type, contextId ?? ""]);
  const existing = forStore.get(key);
  if (existing !== undefined) return existing;

  const table = forStore;
  let resolveRefresh: (updated: boolean) => void = () => {};
  const refresh = new Promise<boolean>((resolve) => {
    resolveRefresh = resolve;
  });
  table.set(key, refresh);
  let finished = false;
  const onUpdate = (payload: unknown): void => {
    const event = payload as { type?: unknown; contextId?: unknown } | null | undefined;
    if (event?.type === type && (event.contextId ?? "") === (contextId ?? "")) finish(true);
  };
  const timer = setTimeout(() => finish(false), timeoutMs);
  function finish(updated: boolean): void {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    store.removeHandler(APP_USER_EVENTS.secretUpdated, onUpdate);
    if (table.get(key) === refresh) table.delete(key);
    resolveRefresh(updated);
  }
  // Listen first: a login client may answer synchronously inside raiseEvent.
  store.addHandler(APP_USER_EVENTS.secretUpdated, onUpdate);
  const listeners = store.raiseEvent(APP_USER_EVENTS.requestSecretUpdate, { type, contextId });
  // Nobody was asked for a new secret, so none will come: waiting would only delay the
  // 401. A store that does not say how many listened (undefined) gets the full wait.
  if (listeners === 0) finish(false);
  return refresh;
}
