/**
 * Where session data lives (docs/guides/sessions-and-state.md): in this process, in the cluster's
 * master, or in Redis. The request path loads a session's fields before a method runs and
 * saves what the method changed when it ends; a store only keeps fields, as JSON text,
 * keyed by the session's public id (never the cookie).
 *
 * Errors a store rejects with: SESSION_STORE_UNAVAILABLE (503) when it cannot be reached
 * in time, SESSION_DATA_TOO_LARGE (413) when a save would leave the session over
 * `maxBytes`, in which case nothing of it is saved.
 */

/** What a call changed: fields set (name → JSON text) and fields removed. */
export interface SessionChanges {
  readonly set: ReadonlyArray<readonly [name: string, json: string]>;
  readonly deleted: readonly string[];
}

export interface SessionStore {
  /** Where the data lives, for getStatus and the logs. */
  readonly kind: "memory" | "cluster" | "redis";
  /**
   * The session's fields (name → JSON text); empty when it has none or expired. A store
   * that holds them in this process answers at once, without a promise: this runs on
   * every session-bound call.
   */
  load(id: string): ReadonlyMap<string, string> | Promise<ReadonlyMap<string, string>>;
  /**
   * Applies `changes` at once (each field last writer wins), refusing them all when the
   * session's data would then exceed `maxBytes`; the data expires at `expiresAtMs`, with
   * the session.
   */
  save(id: string, changes: SessionChanges, expiresAtMs: number, maxBytes: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A session's size as every store counts it: the UTF-8 bytes of each field's name and
 * JSON text (what Redis's string lengths give, so all stores agree on the limit).
 */
export function fieldBytes(name: string, json: string): number {
  return Buffer.byteLength(name) + Buffer.byteLength(json);
}
