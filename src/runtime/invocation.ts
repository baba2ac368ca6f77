import type { IncomingMessage, ServerResponse } from "node:http";
import type { MethodEntry } from "../discovery/registry.js";
import type { CoreFacade } from "../core/facade.js";
import type { Logger } from "../log/logger.js";
import type { RpcCall } from "./call.js";
import type { IsolatedRpcContext, RpcContext, RpcSession } from "../plugin-api/context.js";
import type { TraceContext } from "../tracing/trace-context.js";
import type { ItemSecure } from "../config/secure-config.js";
import type { CallLifetime } from "./call-lifetime.js";
import { notStreaming, type StreamSink } from "./stream-sink.js";
import type { CallSession, SessionTransfer } from "../state/call-session.js";
import { failWith } from "../validation/declared-errors.js";
import type { CallFiles } from "./call-files.js";

/** Everything the runtime needs to run one checked call. */
export interface Invocation {
  entry: MethodEntry;
  call: RpcCall;
  args: unknown[];
  /** The session and its data (`ctx.session`), saved when the method ends; null without a session. */
  session: CallSession | null;
  user: unknown;
  viewerId: string | undefined;
  contextId: string | undefined;
  config: unknown;
  /** The item's `ctx.secure`. */
  secure: ItemSecure;
  /** The frozen plugin-facing view of the server (`ctx.core`), the item's own. */
  core: CoreFacade;
  log: Logger;
  req: IncomingMessage;
  res: ServerResponse;
  /** Ended by the gateway when the client goes away, by the runtime on timeout. */
  lifetime: CallLifetime;
  /** A streaming method's events go here; null for buffered methods. */
  stream: StreamSink | null;
  /** Its uploads and temporary folder (docs/guides/files.md); the testing kit may leave it out. */
  files?: CallFiles | undefined;
}

/**
 * The `ctx` of an inline method. A class rather than an object literal with getters: the
 * literal cost about a microsecond per call. `signal`, `log`, `session` and `trace` are made
 * on first use (an AbortSignal, a child logger, the session object and random ids each cost
 * more than the rest of the context).
 */
class InlineContext implements RpcContext {
  readonly user: unknown;
  readonly viewerId: string | undefined;
  readonly contextId: string | undefined;
  readonly kind: RpcContext["kind"];
  readonly id: string;
  readonly itemId: string;
  readonly method: string;
  readonly requestId: string;
  readonly config: unknown;
  readonly secure: ItemSecure;
  readonly core: CoreFacade;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** An own property, so that `const { emit } = ctx` works as well. */
  readonly emit: (value: unknown) => Promise<void>;
  readonly #invocation: Invocation;
  #log: Logger | undefined = undefined;

  constructor(invocation: Invocation) {
    const { entry } = invocation;
    this.user = invocation.user;
    this.viewerId = invocation.viewerId;
    this.contextId = invocation.contextId;
    this.kind = entry.kind;
    this.id = entry.id;
    this.itemId = entry.id;
    this.method = entry.name;
    this.requestId = invocation.call.requestId;
    this.config = invocation.config;
    this.secure = invocation.secure;
    this.core = invocation.core;
    this.req = invocation.req;
    this.res = invocation.res;
    const { stream } = invocation;
    this.emit = stream ? (value) => stream.emit(value) : notStreaming;
    this.#invocation = invocation;
  }

  get signal(): AbortSignal {
    return this.#invocation.lifetime.signal;
  }

  /** On the prototype: a method that never fails pays nothing for it. */
  fail(code: string, details?: Record<string, unknown>): Error {
    return failWith(this.#invocation.entry.policy.errors, this.method, code, details);
  }

  /** The call's temporary folder, removed when the call ends (after a file answer from it is sent). */
  tempDir(): Promise<string> {
    const { files } = this.#invocation;
    return files ? files.dir() : Promise.reject(new Error("ctx.tempDir() is not available here"));
  }

  /** Made on first use, like `signal` and `log` (docs/guides/server-methods.md "Server methods"). */
  get session(): RpcSession | null {
    return this.#invocation.session?.view ?? null;
  }

  get trace(): TraceContext {
    return this.#invocation.call.trace.context;
  }

  get log(): Logger {
    this.#log ??= this.#invocation.log.child({ reqId: this.requestId, kind: this.kind, id: this.id, method: this.method });
    return this.#log;
  }
}

export function inlineContext(invocation: Invocation): RpcContext {
  return new InlineContext(invocation);
}

/**
 * What crosses to the worker; `signal`, `emit` and `session` are re-created there, the
 * session from `sessionData` (its fields as JSON text, or null when the store could not
 * be reached).
 */
export type IsolatedContextData = Omit<IsolatedRpcContext, "signal" | "args" | "emit" | "session" | "fail" | "tempDir"> & {
  sessionData: SessionTransfer | null;
};

/** The serialisable part, all an isolated method gets. */
export function isolatedContext(invocation: Invocation): IsolatedContextData {
  return {
    sessionData: invocation.session ? invocation.session.transfer() : null,
    user: invocation.user,
    viewerId: invocation.viewerId,
    contextId: invocation.contextId,
    kind: invocation.entry.kind,
    id: invocation.entry.id,
    itemId: invocation.entry.id,
    method: invocation.entry.name,
    requestId: invocation.call.requestId,
    trace: invocation.call.trace.context,
    config: invocation.config,
    secure: invocation.secure,
    core: invocation.core,
  };
}
