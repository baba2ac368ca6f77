/**
 * `client.plugin(id)` and `client.module(id)`: an item's methods called as the browser
 * calls them, resolving to the result or rejecting with an `RpcCallError` built from the
 * answer (or the stream's last record).
 */
import { RpcCallError } from "./call-error.js";
import { callErrorOf } from "./answer-parsing.js";
import { methodProxy } from "./item-proxy.js";
import type { EventOf, InputArgs, MethodNames, ResultOf } from "./method-types.js";
import type { CallAnswer, CallOptions, RpcKind, StreamAnswer } from "./wire-types.js";

/** Any server file's module, when a test does not name its type. */
export type UntypedServerFile = Record<string, (ctx: any, ...args: any[]) => any>;

/**
 * The methods of one plugin or module, called as the browser's `xserver.plugin.<id>`
 * calls them, with one input: each resolves to the result or rejects with an
 * `RpcCallError`. Typed by the server file's module type:
 * `viewer.plugin<typeof Notes>("notes")` after `import type * as Notes from "…/notes.server.js"`.
 */
export type ItemClient<M = UntypedServerFile> = {
  [K in MethodNames<M>]: (...input: InputArgs<M[K]>) => Promise<ResultOf<M[K]>>;
} & {
  /** Streaming methods: every event, then the result, once the stream has ended. */
  $stream: { [K in MethodNames<M>]: (...input: InputArgs<M[K]>) => Promise<{ events: Array<EventOf<M[K]>>; result: ResultOf<M[K]> }> };
};

/** What an item client sends its calls through: the `TestClient` it came from. */
export interface ItemTransport {
  call(kind: RpcKind, id: string, method: string, args: unknown[], options: CallOptions): Promise<CallAnswer>;
  stream(kind: RpcKind, id: string, method: string, args: unknown[], options: CallOptions): Promise<StreamAnswer>;
}

export function itemClient<M>(transport: ItemTransport, kind: RpcKind, id: string, options: CallOptions): ItemClient<M> {
  const buffered = async (method: string, given: unknown[]): Promise<unknown> => {
    const answer = await transport.call(kind, id, method, browserArgs(kind, id, method, given), options);
    if (answer.status === 200 && Object.hasOwn(answer.body, "result")) return answer.body.result;
    throw callErrorOf(answer.status, answer.body, answer.text, answer.reqId);
  };
  const streamed = async (method: string, given: unknown[]): Promise<{ events: unknown[]; result: unknown }> => {
    const answer = await transport.stream(kind, id, method, browserArgs(kind, id, method, given), options);
    if (answer.body) throw callErrorOf(answer.status, answer.body, answer.text, answer.reqId);
    if (!answer.end) {
      throw new RpcCallError({ status: answer.status, code: "RPC_STREAM_TRUNCATED", message: `${kind}/${id}/${method}: the stream ended without its last record`, body: answer.records, reqId: answer.reqId });
    }
    if (!answer.end.ok) throw callErrorOf(answer.end.status, answer.end, answer.text, answer.reqId);
    return { events: answer.events, result: answer.end.result };
  };
  return methodProxy(buffered, methodProxy(streamed)) as ItemClient<M>;
}

/**
 * The body's `args` exactly as the browser's client builds them from `method(input)`
 * (src/client/rpc.ts, `rpcBody`): an undefined input is no argument at all, so that the
 * method's default parameter applies, where JSON would have made it `null`. The browser
 * reads a second argument as the call's options, so a test passing two inputs would
 * test a call no page can make.
 */
function browserArgs(kind: RpcKind, id: string, method: string, given: unknown[]): unknown[] {
  if (given.length > 1) {
    throw new TypeError(
      `${kind}/${id}/${method}: the browser's xserver.${kind}.${id}.${method}(input) sends one input (a second argument is the call's options); ` +
        `for a method of several arguments use client.call("${kind}", "${id}", "${method}", [a, b])`,
    );
  }
  const [input] = given;
  return input === undefined ? [] : [input];
}
