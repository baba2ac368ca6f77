/**
 * A made-up `ctx` for calling one method function directly, without a server: every
 * field of `RpcContext` with a default a test can override, and what the method did to it
 * kept for the test to read (its events, log lines and session data). It follows the
 * server's rules where a method could notice them, so that a test cannot pass where a
 * real call fails: the input, the result, events and session data go through JSON, `id`
 * and `createdAt` are read-only, `emit` rejects in a buffered method and once the signal
 * fired or the method returned.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes, randomUUID } from "node:crypto";
import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import { itemSecure, frozenCopy, type SecureBlock } from "../config/secure-config.js";
import { createCoreFacade } from "../core/facade.js";
import { createLogger, type Logger } from "../log/logger.js";
import type { RpcContext, RpcSession } from "../plugin-api/context.js";
import { parseRpcBody } from "../rpc/body.js";
import { toSerialized } from "../runtime/serialized-result.js";
import { notStreaming, refusedEmit, serializeEvent, StreamEndedError } from "../runtime/stream-sink.js";
import { fieldsOf, sessionView } from "../state/session-data.js";
import { randomSpanId, randomTraceId, traceContextOf, type TraceContext } from "../tracing/trace-context.js";
import { ensureAppServerGlobal } from "./app-server-global.js";
import { LogCapture, type LogLine } from "./log-capture.js";
import { declaredPolicy } from "./server-file.js";
import { checkArgs, checkResult } from "../validation/check.js";
import { declaredErrorsOf, failWith } from "../validation/declared-errors.js";
import type { DeclaredErrorPolicy } from "../discovery/policy.js";
import type { ArgsOf, ConfigOf, EventOf, InputOf, ResultOf, ServerMethod } from "./method-types.js";

export interface ContextOverrides<Config = unknown> {
  /** `ctx.config` (default `{}`, as for an item the config does not name). */
  config?: Config;
  /**
   * The session's data when the call starts, copied as JSON as the server loads it; the
   * `session` of an earlier run continues that session (its `id` too). `null`: no
   * session, as a public method called without one. Default: a new, empty session.
   */
  session?: Record<string, unknown> | null;
  /** `ctx.user`, what a verifier set (default null). */
  user?: unknown;
  /** `ctx.signal` (default: one that never fires); abort your own controller's to test cancelling. */
  signal?: AbortSignal;
  /** This item's secure config block, read as `ctx.secure.plugins.<id>` (default `{}`). */
  secure?: Record<string, unknown>;
  /** `ctx.secure.rpcVerifiers` (default `{}`). */
  rpcVerifiers?: Record<string, unknown>;
  kind?: "plugin" | "module";
  /** Default `"test"`. */
  id?: string;
  /** Default: the function's name. */
  method?: string;
  viewerId?: string;
  contextId?: string;
  requestId?: string;
  /** `ctx.trace` (default: a trace of its own, not sampled). */
  trace?: TraceContext;
  /** `ctx.core.server.devMode` and `APP_SERVER.isDevMode(ctx)` (default false). */
  dev?: boolean;
  /** `ctx.core.client.domain` (default `""`). */
  publicOrigin?: string;
  /** `ctx.req` (default: an empty POST to the method's RPC path). */
  req?: IncomingMessage;
  /** `ctx.res` (default: a response to `req` that goes nowhere). */
  res?: ServerResponse;
  /**
   * Whether the method streams (`policy.<name>.runtime.streaming`). A buffered method's
   * `ctx.emit` rejects, as the server's does. Default false; `callMethod` reads it from the
   * policy of a function `loadServerFile` loaded.
   */
  streaming?: boolean;
  /**
   * The errors `ctx.fail` answers (`policy.<name>.errors`); any other code gives the error
   * a real call answers 500. Default none; `callMethod` reads them from the policy of a
   * function `loadServerFile` loaded.
   */
  errors?: Record<string, DeclaredErrorPolicy>;
}

export interface TestContext<Config = unknown, Event = unknown> {
  /** Pass it to the method: `await search(test.ctx, input)`. */
  readonly ctx: RpcContext<Config, Event>;
  /** Each emitted event as the viewer receives it (its JSON), in order. */
  readonly events: Event[];
  /** The lines the method logged through `ctx.log`. */
  readonly logs: LogLine[];
  /** The session object the method saw, as it left it; null without a session. */
  readonly session: RpcSession | null;
  /**
   * The session's data as the server would save it: each field through JSON. Throws the
   * TypeError the server fails the call with when a field cannot be saved (a BigInt, a cycle).
   */
  sessionData(): Record<string, unknown> | null;
  /** The call has ended: from now on `emit` rejects, as after a method returns. */
  end(): void;
}

/** What `callMethod` gives back: the result and what the method left in its `ctx`. */
export interface MethodRun<F extends ServerMethod> {
  /** The result as the viewer receives it: through the server's JSON (a `Date` is a string, `undefined` is null). */
  result: ResultOf<F>;
  /** The value the method returned, before JSON. */
  returned: ResultOf<F>;
  events: Array<EventOf<F>>;
  logs: LogLine[];
  session: RpcSession | null;
  sessionData(): Record<string, unknown> | null;
  ctx: RpcContext<ConfigOf<F>, EventOf<F>>;
}

export function makeContext<Config = unknown, Event = unknown>(overrides: ContextOverrides<Config> = {}): TestContext<Config, Event> {
  ensureAppServerGlobal();
  const kind = overrides.kind ?? "plugin";
  const id = overrides.id ?? "test";
  const method = overrides.method ?? "method";
  const requestId = overrides.requestId ?? randomUUID();
  const secure = itemSecure(kind, id, frozenCopy(overrides.secure ?? {}) as SecureBlock, frozenCopy(overrides.rpcVerifiers ?? {}) as SecureBlock);
  const session = overrides.session === null ? null : madeUpSession(overrides.session ?? {});
  const signal = overrides.signal ?? new AbortController().signal;
  const streaming = overrides.streaming ?? false;
  const errors = declaredErrorsOf(overrides.errors);
  const events: Event[] = [];
  const capture = new LogCapture();
  let ended = false;
  let log: Logger | undefined;
  let req = overrides.req;
  let tempDir: Promise<string> | undefined;
  let res = overrides.res;

  const ctx: RpcContext<Config, Event> = {
    session,
    user: overrides.user ?? null,
    viewerId: overrides.viewerId,
    contextId: overrides.contextId,
    kind,
    id,
    itemId: id,
    method,
    requestId,
    trace: overrides.trace ?? traceContextOf(randomTraceId(), randomSpanId(), 0),
    config: (overrides.config ?? {}) as Config,
    secure,
    core: createCoreFacade({ dev: overrides.dev ?? false, secure, domain: overrides.publicOrigin ?? null }),
    signal,
    // A folder of its own, as a real call has; the test's temporary space, left to the OS.
    tempDir: () => (tempDir ??= mkdtemp(join(tmpdir(), "counterpart-test-call-"))),
    emit(value: Event): Promise<void> {
      if (!streaming) return notStreaming();
      if (ended) return refusedEmit(new StreamEndedError());
      if (signal.aborted) return refusedEmit(signal.reason);
      let json: string;
      try {
        json = serializeEvent(value);
      } catch (error) {
        return refusedEmit(error);
      }
      events.push(JSON.parse(json) as Event);
      return Promise.resolve();
    },
    fail(code: string, details?: Record<string, unknown>): Error {
      return failWith(errors, method, code, details);
    },
    get log(): Logger {
      log ??= createLogger({ dev: false, destination: capture, level: "trace" }).logger.child({ reqId: requestId, kind, id, method });
      return log;
    },
    // Made on first use, as few methods touch them.
    get req(): IncomingMessage {
      req ??= Object.assign(new IncomingMessage(new Socket()), { method: "POST", url: `/__rpc/${kind}/${id}/${method}` });
      return req;
    },
    get res(): ServerResponse {
      res ??= new ServerResponse(ctx.req);
      return res;
    },
  };

  return {
    ctx,
    events,
    get logs() {
      return capture.lines();
    },
    session,
    sessionData: () => (session ? Object.fromEntries([...fieldsOf(session)].map(([name, json]) => [name, JSON.parse(json) as unknown])) : null),
    end() {
      ended = true;
    },
  };
}

/** `input` may be left out only when the method's own signature lets it. */
export type CallMethodArgs<F extends ServerMethod> = [] extends ArgsOf<F>
  ? [input?: InputOf<F>, overrides?: ContextOverrides<ConfigOf<F>>]
  : [input: InputOf<F>, overrides?: ContextOverrides<ConfigOf<F>>];

/**
 * Calls `fn(ctx, input)` with a made-up `ctx` and waits for it. Rejects with what the
 * method threw (an `RpcError` keeps its `status`, `code` and `details`). Types come from
 * `fn`: `input` is its argument, `overrides.config` its `ctx.config`, the events its
 * `Event`. A method with more than one argument: `makeContext`, then call it yourself.
 *
 * The input and the result cross JSON as they would between a browser and the server,
 * by the server's own code, so that a test passes only with values a real call carries.
 */
export async function callMethod<F extends ServerMethod>(fn: F, ...[input, overrides = {}]: CallMethodArgs<F>): Promise<MethodRun<F>> {
  const declared = declaredPolicy(fn);
  // The policy's `input` and `output` checks, by the server's own code: a bad input
  // rejects with the server's 400 RPC_BAD_INPUT, a bad result with 500 RPC_BAD_RESULT
  // (its issues in `details`, as in dev mode), and `output` always runs here.
  const wired = argsOverTheWire(input);
  const validated = declared?.input ? await checkArgs(declared.input, wired) : wired;
  if (!Array.isArray(validated)) throw validated;
  const args = validated;
  const test = makeContext<ConfigOf<F>, EventOf<F>>({
    method: fn.name || undefined,
    ...overrides,
    streaming: overrides.streaming ?? declared?.streaming,
    errors: overrides.errors ?? declared?.errors,
  });
  try {
    const returned = (await fn(test.ctx, ...args)) as ResultOf<F>;
    const checked = declared?.output ? await checkResult(declared.output, returned, true) : returned;
    // Refused as the server refuses it: RPC_BAD_RESULT, with the serialiser's error as its cause.
    const result = JSON.parse(toSerialized(checked).json) as ResultOf<F>;
    return { result, returned, events: test.events, logs: test.logs, session: test.session, sessionData: test.sessionData, ctx: test.ctx };
  } finally {
    test.end();
  }
}

/**
 * The arguments the method gets for `input`: the body the browser builds (no argument for
 * `undefined`) as JSON, read back by the server's body parser, which refuses what the
 * server refuses (a `__proto__` key).
 */
function argsOverTheWire(input: unknown): unknown[] {
  let json: string;
  try {
    json = JSON.stringify({ args: input === undefined ? [] : [input] });
  } catch (error) {
    // The browser's call would fail the same way, before sending anything.
    throw new TypeError(`callMethod: the input is not JSON-serialisable (${(error as Error).message})`, { cause: error });
  }
  return parseRpcBody(Buffer.from(json)).args;
}

function madeUpSession(start: Record<string, unknown>): RpcSession {
  const continued = typeof start.id === "string" && typeof start.createdAt === "number";
  const id = continued ? (start.id as string) : randomBytes(18).toString("base64url");
  const createdAt = continued ? (start.createdAt as number) : Date.now();
  return sessionView(id, createdAt, fieldsOf(start));
}
