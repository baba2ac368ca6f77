/**
 * A cluster worker's session store: the master holds the data (docs/guides/sessions-and-state.md), so
 * that a viewer whose calls land on different workers sees one session. Each load and
 * save is one request over the worker's IPC channel; a master that does not answer in
 * time counts as an unreachable store (503 SESSION_STORE_UNAVAILABLE for the calls that
 * use the data).
 */
import { errorOf } from "../errors/http-error.js";
import type { SessionChanges, SessionStore } from "../state/session-store.js";
import type { IpcChannel } from "./ipc.js";

/** How long a load or save may wait for the master: well under any call's timeout. */
export const SESSION_IPC_TIMEOUT_MS = 2_000;

/** The master's answer to a save: the store's refusal travels as data, since IPC errors carry only text. */
export type SessionSaveReply = { saved: true } | { tooLarge: number };

export interface SessionSaveRequest {
  id: string;
  set: Array<[string, string]>;
  deleted: string[];
  expiresAtMs: number;
  maxBytes: number;
}

export class IpcSessionStore implements SessionStore {
  readonly kind = "cluster" as const;
  readonly #channel: IpcChannel;

  constructor(channel: IpcChannel) {
    this.#channel = channel;
  }

  /**
   * Loads asked for in one turn of the event loop go to the master as one message: under
   * load a worker starts several calls per turn, and each IPC message costs both processes
   * far more than the lookup it carries.
   */
  load(id: string): Promise<ReadonlyMap<string, string>> {
    return new Promise((resolve, reject) => {
      this.#batch.push({ id, resolve, reject });
      if (this.#batch.length === 1) setImmediate(this.#sendBatch);
    });
  }

  #batch: Array<{ id: string; resolve: (fields: ReadonlyMap<string, string>) => void; reject: (error: Error) => void }> = [];

  readonly #sendBatch = (): void => {
    const batch = this.#batch;
    this.#batch = [];
    this.#channel.request<Array<Array<[string, string]>>>("session-load", batch.map((entry) => entry.id), SESSION_IPC_TIMEOUT_MS).then(
      (answers) => batch.forEach((entry, index) => entry.resolve(new Map(answers[index]))),
      (error: unknown) => {
        const unavailable = Object.assign(errorOf("SESSION_STORE_UNAVAILABLE"), { cause: error });
        for (const entry of batch) entry.reject(unavailable);
      },
    );
  };

  async save(id: string, changes: SessionChanges, expiresAtMs: number, maxBytes: number): Promise<void> {
    const request: SessionSaveRequest = { id, set: changes.set.map(([name, json]) => [name, json]), deleted: [...changes.deleted], expiresAtMs, maxBytes };
    let reply: SessionSaveReply;
    try {
      reply = await this.#channel.request<SessionSaveReply>("session-save", request, SESSION_IPC_TIMEOUT_MS);
    } catch (error) {
      throw Object.assign(errorOf("SESSION_STORE_UNAVAILABLE"), { cause: error });
    }
    if ("tooLarge" in reply) throw errorOf("SESSION_DATA_TOO_LARGE", { maxBytes: reply.tooLarge });
  }

  /** The master owns the data: a worker going away leaves it alone. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** The master's side: answers its workers' loads and saves from its own store. */
export function serveSessions(channel: IpcChannel, store: SessionStore): void {
  channel.handle("session-load", async (ids) => Promise.all((ids as string[]).map(async (id) => [...(await store.load(String(id)))])));
  channel.handle("session-save", async (payload): Promise<SessionSaveReply> => {
    const { id, set, deleted, expiresAtMs, maxBytes } = payload as SessionSaveRequest;
    try {
      await store.save(id, { set, deleted }, expiresAtMs, maxBytes);
      return { saved: true };
    } catch (error) {
      if ((error as { code?: unknown }).code === "SESSION_DATA_TOO_LARGE") return { tooLarge: maxBytes };
      throw error;
    }
  });
}
