/**
 * Session data in this process (docs/guides/sessions-and-state.md): `index.js` on its own, and the
 * cluster's master for its workers. Bounded in sessions and in bytes, the least recently
 * used session dropped first; each session's data expires with the session.
 */
import { errorOf } from "../errors/http-error.js";
import { fieldBytes, type SessionChanges, type SessionStore } from "./session-store.js";

interface Entry {
  fields: Map<string, string>;
  bytes: number;
  expiresAtMs: number;
}

const EMPTY: ReadonlyMap<string, string> = new Map();
/** How often expired sessions are swept out (they are also dropped whenever they are met). */
const SWEEP_MS = 60_000;

export class MemorySessionStore implements SessionStore {
  readonly kind = "memory" as const;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  readonly #sweeper: NodeJS.Timeout;

  constructor(maxEntries: number, maxBytes: number) {
    this.#maxEntries = maxEntries;
    this.#maxBytes = maxBytes;
    this.#sweeper = setInterval(() => this.#sweep(Date.now()), SWEEP_MS).unref();
  }

  /** Sessions and bytes held, for getStatus. */
  get size(): { sessions: number; bytes: number } {
    return { sessions: this.#entries.size, bytes: this.#bytes };
  }

  load(id: string): ReadonlyMap<string, string> {
    const entry = this.#live(id, Date.now());
    // A copy: the caller's view of what it loaded must not change under it.
    return entry ? new Map(entry.fields) : EMPTY;
  }

  save(id: string, changes: SessionChanges, expiresAtMs: number, maxBytes: number): Promise<void> {
    const now = Date.now();
    const entry = this.#live(id, now) ?? { fields: new Map<string, string>(), bytes: 0, expiresAtMs };
    let bytes = entry.bytes;
    for (const name of changes.deleted) {
      const json = entry.fields.get(name);
      if (json !== undefined) bytes -= fieldBytes(name, json);
    }
    for (const [name, json] of changes.set) {
      const old = entry.fields.get(name);
      bytes += fieldBytes(name, json) - (old === undefined ? 0 : fieldBytes(name, old));
    }
    if (bytes > maxBytes) return Promise.reject(errorOf("SESSION_DATA_TOO_LARGE", { maxBytes }));
    for (const name of changes.deleted) entry.fields.delete(name);
    for (const [name, json] of changes.set) entry.fields.set(name, json);
    this.#bytes += bytes - entry.bytes;
    entry.bytes = bytes;
    entry.expiresAtMs = expiresAtMs;
    this.#entries.delete(id);
    if (entry.fields.size === 0) return Promise.resolve();
    this.#entries.set(id, entry);
    this.#evict();
    return Promise.resolve();
  }

  close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#entries.clear();
    this.#bytes = 0;
    return Promise.resolve();
  }

  /** The unexpired entry, marked as just used; an expired one is dropped. */
  #live(id: string, now: number): Entry | undefined {
    const entry = this.#entries.get(id);
    if (!entry) return undefined;
    this.#entries.delete(id);
    if (entry.expiresAtMs <= now) {
      this.#bytes -= entry.bytes;
      return undefined;
    }
    this.#entries.set(id, entry);
    return entry;
  }

  #evict(): void {
    for (const [id, entry] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) return;
      this.#entries.delete(id);
      this.#bytes -= entry.bytes;
    }
  }

  #sweep(now: number): void {
    for (const [id, entry] of this.#entries) {
      if (entry.expiresAtMs > now) continue;
      this.#entries.delete(id);
      this.#bytes -= entry.bytes;
    }
  }
}
