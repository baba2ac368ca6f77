/**
 * One call's (or route request's) session data: loaded from the store before the code
 * runs, handed to it as `ctx.session`, and what changed saved when it ends (docs/guides/sessions-and-state.md
 * "Session data"). A store that cannot be reached does not fail the call: the view then
 * refuses only reads and writes of data, with 503 SESSION_STORE_UNAVAILABLE.
 */
import { isHttpError } from "../errors/http-error.js";
import { changesBetween, fieldsOf, sessionView, unavailableSessionView, type SessionView } from "./session-data.js";
import type { SessionStore } from "./session-store.js";

export interface SessionIdentity {
  id: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  /** Seconds since the epoch: the data expires with the session. */
  expiresAt: number;
}

/** What an isolated method's worker rebuilds `ctx.session` from: the fields as loaded, or null when the store could not be reached. */
export interface SessionTransfer {
  id: string;
  createdAt: number;
  fields: Array<[string, string]> | null;
}

export class CallSession {
  #view: SessionView | undefined = undefined;
  readonly #store: SessionStore;
  readonly #identity: SessionIdentity;
  readonly #maxBytes: number;
  /** What was loaded; null when the store could not be reached (nothing is saved then). */
  readonly #loaded: ReadonlyMap<string, string> | null;
  /** Set when an isolated method's copy of the view came back in its place. */
  #returned: Map<string, string> | undefined = undefined;

  /** Set for a call whose method cannot read `ctx.session`: nothing was loaded. */
  readonly #skipped: boolean;

  private constructor(store: SessionStore, identity: SessionIdentity, maxBytes: number, loaded: ReadonlyMap<string, string> | null, skipped = false) {
    this.#store = store;
    this.#identity = identity;
    this.#maxBytes = maxBytes;
    this.#loaded = loaded;
    this.#skipped = skipped;
  }

  /**
   * `ctx.session`, made on first use: most calls never touch it, and making the object with
   * its two read-only fields cost about as much as the rest of the session step.
   */
  get view(): SessionView {
    const loaded = this.#loaded;
    const { id, createdAt } = this.#identity;
    this.#view ??= loaded ? sessionView(id, createdAt, loaded) : this.#skipped ? unavailableSessionView(id, createdAt, notLoaded) : unavailableSessionView(id, createdAt);
    return this.#view;
  }

  /**
   * The session of a call whose method cannot read `ctx.session` (src/discovery/session-use.ts
   * decides when the method is loaded): the store is not asked, and nothing is saved.
   */
  static withoutData(store: SessionStore, identity: SessionIdentity): CallSession {
    return new CallSession(store, identity, 0, null, true);
  }

  /**
   * Loads the session's data; an unreachable store gives a view that refuses data access
   * instead of failing. At once when the store answers at once (the in-memory one).
   */
  static open(store: SessionStore, identity: SessionIdentity, maxBytes: number): CallSession | Promise<CallSession> {
    let loading: ReadonlyMap<string, string> | Promise<ReadonlyMap<string, string>>;
    try {
      loading = store.load(identity.id);
    } catch (error) {
      return Promise.reject(error);
    }
    if (!(loading instanceof Promise)) return new CallSession(store, identity, maxBytes, loading);
    return loading.then(
      (loaded) => new CallSession(store, identity, maxBytes, loaded),
      (error: unknown) => {
        if (!isHttpError(error) || error.code !== "SESSION_STORE_UNAVAILABLE") throw error;
        return new CallSession(store, identity, maxBytes, null);
      },
    );
  }

  /** False when the store could not be reached (or was not asked): an isolated method builds the refusing view itself. */
  get available(): boolean {
    return this.#loaded !== null;
  }

  transfer(): SessionTransfer {
    return { id: this.#identity.id, createdAt: this.#identity.createdAt, fields: this.#loaded ? [...this.#loaded] : null };
  }

  /** The fields an isolated method left in its copy of `ctx.session`. */
  adopt(fields: Map<string, string>): void {
    this.#returned = fields;
  }

  /**
   * Saves what changed: undefined when nothing did (most calls: no promise, no store
   * round trip). Rejects with SESSION_DATA_TOO_LARGE or SESSION_STORE_UNAVAILABLE; throws
   * a TypeError naming a field JSON cannot carry.
   */
  save(): Promise<void> | undefined {
    const loaded = this.#loaded;
    if (loaded === null) return undefined;
    const view = this.#view;
    // Never looked at, or a session that had no data and was given none.
    if (this.#returned === undefined && (view === undefined || (loaded.size === 0 && Object.keys(view).length === 2))) return undefined;
    const changes = changesBetween(loaded, this.#returned ?? fieldsOf(view!));
    if (changes === null) return undefined;
    return this.#store.save(this.#identity.id, changes, this.#identity.expiresAt * 1000, this.#maxBytes);
  }
}

/**
 * Never expected: the reading of the method's source ruled this out. Should it ever happen,
 * the call fails loudly (a 500 with this in the log) rather than see a session without its data.
 */
function notLoaded(): Error {
  return new Error("ctx.session's data was not loaded: this method's source was read as never using ctx.session (README \"Session data\")");
}
