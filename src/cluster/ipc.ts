/**
 * The cluster's IPC protocol: plain JSON messages over the `node:cluster` channel between
 * the master and each worker, all with a `type` starting with `counterpart:` so that
 * other users of the channel (prom-client, the app's own code) are left alone.
 *
 *   worker → master  ready { url } · startup-failed { message } · log { line }
 *   both ways        request { requestId, op, payload } · reply { requestId, ok, value | error }
 *
 * `IpcChannel` is the request/reply half, the same on both ends: each request carries an
 * id of its channel, its reply is matched by that id, and no request waits longer than its
 * timeout (a worker that died or hangs must not hold a caller forever).
 * May import nothing from the server side.
 */
export const MESSAGE_PREFIX = "counterpart:";

export type ClusterMessage =
  | { type: "counterpart:ready"; url: string }
  | { type: "counterpart:startup-failed"; message: string }
  | { type: "counterpart:log"; line: string }
  | { type: "counterpart:request"; requestId: number; op: string; payload: unknown }
  | { type: "counterpart:reply"; requestId: number; ok: true; value: unknown }
  | { type: "counterpart:reply"; requestId: number; ok: false; error: string };

export function isClusterMessage(message: unknown): message is ClusterMessage {
  return (
    typeof message === "object" &&
    message !== null &&
    typeof (message as { type?: unknown }).type === "string" &&
    (message as { type: string }).type.startsWith(MESSAGE_PREFIX)
  );
}

export class IpcTimeoutError extends Error {
  readonly code = "IPC_TIMEOUT";
  constructor(op: string, timeoutMs: number) {
    super(`no answer to ${op} within ${timeoutMs} ms`);
    this.name = "IpcTimeoutError";
  }
}

export class IpcClosedError extends Error {
  readonly code = "IPC_CLOSED";
  constructor(reason: string) {
    super(reason);
    this.name = "IpcClosedError";
  }
}

type Handler = (payload: unknown) => unknown;

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export class IpcChannel {
  readonly #send: (message: ClusterMessage) => void;
  readonly #handlers = new Map<string, Handler>();
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #closed: string | null = null;

  constructor(send: (message: ClusterMessage) => void) {
    this.#send = send;
  }

  /** Answers the other end's requests for `op`. */
  handle(op: string, handler: Handler): void {
    this.#handlers.set(op, handler);
  }

  request<T>(op: string, payload: unknown, timeoutMs: number): Promise<T> {
    if (this.#closed !== null) return Promise.reject(new IpcClosedError(this.#closed));
    const requestId = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(requestId);
        reject(new IpcTimeoutError(op, timeoutMs));
      }, timeoutMs);
      timer.unref();
      this.#pending.set(requestId, { resolve: resolve as (value: unknown) => void, reject, timer });
      try {
        this.#send({ type: "counterpart:request", requestId, op, payload });
      } catch (error) {
        clearTimeout(timer);
        this.#pending.delete(requestId);
        reject(error as Error);
      }
    });
  }

  /** Takes a request or a reply; returns false for every other message. */
  receive(message: ClusterMessage): boolean {
    if (message.type === "counterpart:reply") {
      const pending = this.#pending.get(message.requestId);
      if (!pending) return true; // timed out already
      this.#pending.delete(message.requestId);
      clearTimeout(pending.timer);
      if (message.ok) pending.resolve(message.value);
      else pending.reject(new Error(message.error));
      return true;
    }
    if (message.type === "counterpart:request") {
      void this.#answer(message.requestId, message.op, message.payload);
      return true;
    }
    return false;
  }

  /** The other end is gone: every waiting request fails now rather than at its timeout. */
  close(reason: string): void {
    this.#closed = reason;
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      pending.reject(new IpcClosedError(reason));
      this.#pending.delete(id);
    }
  }

  async #answer(requestId: number, op: string, payload: unknown): Promise<void> {
    const handler = this.#handlers.get(op);
    let reply: ClusterMessage;
    try {
      if (!handler) throw new Error(`no handler for ${op}`);
      reply = { type: "counterpart:reply", requestId, ok: true, value: await handler(payload) };
    } catch (error) {
      reply = { type: "counterpart:reply", requestId, ok: false, error: (error as Error)?.message ?? String(error) };
    }
    if (this.#closed !== null) return;
    try {
      this.#send(reply);
    } catch {
      // The other end went away while we worked: nobody to answer.
    }
  }
}
