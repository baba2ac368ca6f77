/**
 * AppUser: the page's in-memory secret store and event source (docs/guides/browser.md
 * "The 401 refresh flow"). A login client stores tokens with `setSecret`; every
 * HttpClient reads them with `getSecret` and, on a 401, raises `requestSecretUpdate`
 * here and waits for the `secret-updated` that the next `setSecret` raises.
 *
 * Secrets live only in memory (a Map keyed by type and context), never in storage that
 * outlives the page or that other origins' scripts could read. Browser code only.
 */
import { reportError } from "./report.js";
import { pageSingleton } from "./shared.js";
import type { SecretEventPayload, SecretStore } from "./types.js";

export type EventHandler = (payload: unknown) => void;

/** The event names AppUser itself raises. */
export const APP_USER_EVENTS = {
  requestSecretUpdate: "requestSecretUpdate",
  secretUpdated: "secret-updated",
  secretRemoved: "secret-removed",
} as const;

export class AppUser implements SecretStore {
  readonly #secrets = new Map<string, string>();
  readonly #handlers = new Map<string, Set<EventHandler>>();

  /** Stores a secret and raises `secret-updated` with `{ type, contextId }`. */
  setSecret(value: string, type: string, contextId?: string): void {
    checkType(type, "setSecret");
    if (value === undefined || value === null) {
      throw new TypeError("AppUser.setSecret: value is missing; use removeSecret(type, contextId) to forget a secret");
    }
    this.#secrets.set(secretKey(type, contextId), value);
    this.raiseEvent(APP_USER_EVENTS.secretUpdated, payloadOf(type, contextId));
  }

  /** The stored secret, or undefined when there is none. */
  getSecret(type: string, contextId?: string): string | undefined {
    checkType(type, "getSecret");
    return this.#secrets.get(secretKey(type, contextId));
  }

  /** Forgets a secret; raises `secret-removed` and returns true when there was one. */
  removeSecret(type: string, contextId?: string): boolean {
    checkType(type, "removeSecret");
    const removed = this.#secrets.delete(secretKey(type, contextId));
    if (removed) this.raiseEvent(APP_USER_EVENTS.secretRemoved, payloadOf(type, contextId));
    return removed;
  }

  addHandler(name: string, handler: EventHandler): void {
    if (typeof handler !== "function") throw new TypeError("AppUser.addHandler: handler must be a function");
    let handlers = this.#handlers.get(name);
    if (handlers === undefined) {
      handlers = new Set();
      this.#handlers.set(name, handlers);
    }
    handlers.add(handler);
  }

  removeHandler(name: string, handler: EventHandler): void {
    const handlers = this.#handlers.get(name);
    if (handlers === undefined) return;
    handlers.delete(handler);
    if (handlers.size === 0) this.#handlers.delete(name);
  }

  /**
   * Calls the handlers of `name` synchronously, in the order they were added. A handler
   * that throws is reported (like an uncaught error) without stopping the others, so
   * one broken listener cannot block a token refresh. Returns how many handlers it
   * called, so that a 401 with nobody to refresh the secret does not wait for one.
   */
  raiseEvent(name: string, payload?: unknown): number {
    const handlers = this.#handlers.get(name);
    if (handlers === undefined) return 0;
    const called = [...handlers];
    for (const handler of called) {
      try {
        handler(payload);
      } catch (error) {
        reportError(error);
      }
    }
    return called.length;
  }
}

/** The page's AppUser (shared with any other copy of this library on the page). */
export const appUser: AppUser = pageSingleton("appUser", () => new AppUser());

function secretKey(type: string, contextId: string | undefined): string {
  // JSON keeps "a" + "b:c" and "a:b" + "c" apart; null and "" mean "no context".
  return JSON.stringify([type, contextId ?? ""]);
}

function payloadOf(type: string, contextId: string | undefined): SecretEventPayload {
  return { type, contextId };
}

function checkType(type: unknown, method: string): void {
  if (typeof type !== "string" || type === "") {
    throw new TypeError(`AppUser.${method}: type must be a non-empty string such as "jwt"`);
  }
}
