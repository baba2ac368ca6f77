/**
 * Auth headers from stored secrets (docs/guides/browser.md "Auth handlers"): for each
 * type in order, read the secret, call the handler for that type (the client's own first,
 * then the global registry) and merge what it returns.
 *
 * The registry is a Map, so user-chosen names such as `__proto__` or `toString` are
 * plain names and never resolve to something inherited; per-client handler objects are
 * read with own-property checks for the same reason.
 */
import { pageSingleton } from "./shared.js";
import type { AuthHandler, AuthOptions, SecretStore } from "./types.js";

const jwtHandler: AuthHandler = ({ secret }) => ({ Authorization: `Bearer ${secret}` });

const registry: Map<string, AuthHandler> = pageSingleton("authHandlers", () => new Map([["jwt", jwtHandler]]));

export function addAuthHandler(name: string, handler: AuthHandler): void {
  if (typeof name !== "string" || name === "") throw new TypeError("HttpClient.addAuthHandler: name must be a non-empty string");
  if (typeof handler !== "function") throw new TypeError("HttpClient.addAuthHandler: handler must be a function");
  registry.set(name, handler);
}

export function removeAuthHandler(name: string): boolean {
  return registry.delete(name);
}

export function findAuthHandler(type: string, own: AuthOptions["handlers"]): AuthHandler | undefined {
  if (own !== undefined && own !== null && Object.prototype.hasOwnProperty.call(own, type)) {
    const handler = own[type];
    if (typeof handler === "function") return handler;
  }
  return registry.get(type);
}

export interface AuthResult {
  headers: Headers;
  /** The secret each type was built from, to tell later whether it has changed. */
  secrets: Map<string, string>;
}

export async function buildAuthHeaders(
  auth: AuthOptions | undefined,
  store: SecretStore,
  url: string,
  method: string,
  warnNoHandler: (type: string) => void,
): Promise<AuthResult> {
  const headers = new Headers();
  const secrets = new Map<string, string>();
  const contextId = auth?.contextId;
  for (const type of auth?.types ?? []) {
    const secret = await store.getSecret(type, contextId);
    if (secret === undefined || secret === null || secret === "") continue;
    secrets.set(type, secret);
    const handler = findAuthHandler(type, auth?.handlers);
    if (handler === undefined) {
      warnNoHandler(type);
      continue;
    }
    const produced = await handler({ secret, type, contextId, url, method });
    if (produced === undefined || produced === null) continue;
    new Headers(produced as HeadersInit).forEach((value, name) => headers.set(name, value));
  }
  return { headers, secrets };
}

/** Whether any secret now differs from the one a failed request was sent with. */
export async function secretsChanged(
  auth: AuthOptions | undefined,
  store: SecretStore,
  sent: Map<string, string>,
): Promise<boolean> {
  for (const type of auth?.types ?? []) {
    const now = await store.getSecret(type, auth?.contextId);
    if (now !== undefined && now !== null && now !== "" && now !== sent.get(type)) return true;
  }
  return false;
}
