/**
 * A cluster worker's session store: the master holds the data (README "Session data"), so
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

  async load(id: string): Promise<ReadonlyMap<string, string>> {
    try {
      return new Map(await this.#channel.request<Array<[string, string]>>("session-load", id, SESSION_IPC_TIMEOUT_MS));
    } catch (error) {
      throw Object.assign(errorOf("SESSION_STORE_UNAVAILABLE"), { cause: error });
    }
  }

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
  channel.handle("session-load", async (id) => [...(await store.load(String(id)))]);
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
