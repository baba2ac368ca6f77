/**
 * The shapes of a test client's requests and answers: what `send` carries to the server
 * under test, and what `call`, `stream` and `request` hand back for a test to assert on.
 */

export type AnswerHeaders = Record<string, string | string[] | undefined>;

/** One request as the client sends it. */
export interface OutgoingRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

/** One answer as the server gave it. */
export interface RawAnswer {
  status: number;
  headers: AnswerHeaders;
  payload: Buffer;
  /** The server's id of the request: the `reqId` of its log event. */
  reqId: string;
}

export type Send = (request: OutgoingRequest) => Promise<RawAnswer>;

export type RpcKind = "plugin" | "module" | "server";

export interface CallOptions {
  /** The verifier context (`server.secure.rpcVerifiers.<contextId>`). */
  contextId?: string;
  viewerId?: string;
  /** `false` leaves out the X-APP-CSRF header, as a forged cross-site request would. */
  csrf?: boolean;
  /** Sent on top of (and over) the client's own headers. */
  headers?: Record<string, string>;
  /** Sent instead of `{ args, contextId, viewerId }`: an object as JSON, a string or Buffer as it is. */
  body?: unknown;
}

/** An RPC answer's JSON: `{ result }`, or `{ error, code, details }`. */
export interface RpcAnswerBody {
  result?: any;
  error?: string;
  code?: string;
  details?: Record<string, any>;
}

export interface CallAnswer {
  status: number;
  headers: AnswerHeaders;
  body: RpcAnswerBody;
  /** The body as sent. */
  text: string;
  reqId: string;
}

/** A stream's last record (docs/guides/streaming.md). */
export type StreamEnd =
  | { done: true; ok: true; result: any }
  | { done: true; ok: false; error: string; code: string; status: number; details: Record<string, any> };

export interface StreamAnswer {
  status: number;
  headers: AnswerHeaders;
  /** The value of each `{"event": …}` record, in order. */
  events: any[];
  /** The last record, or null when the stream never started (see `body`) or ended without one. */
  end: StreamEnd | null;
  /** Every record as sent, `{"ping": true}` ones included. */
  records: Array<Record<string, any>>;
  /** The JSON error of a call refused before it started streaming, else null. */
  body: RpcAnswerBody | null;
  text: string;
  reqId: string;
}

export interface HttpAnswer {
  status: number;
  headers: AnswerHeaders;
  text: string;
  payload: Buffer;
  /** The body parsed as JSON (throws when it is not). */
  json(): any;
  reqId: string;
}

export interface RequestOptions {
  method?: string;
  /** The path and query, sent as given (`/plugins/notes/app.js`, `/health`). */
  url: string;
  headers?: Record<string, string>;
  /** A string or Buffer as it is; anything else as JSON (with its content type). */
  body?: unknown;
  /** `false` leaves out the X-APP-CSRF header. */
  csrf?: boolean;
}
