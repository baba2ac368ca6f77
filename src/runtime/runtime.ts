/**
 * The runtime steps of the request path, in order: breaker → queue → executor (inline or
 * isolated) under the method's timeout. `run` is the one entry the gateway calls.
 */
import type { ServerCore } from "../server/core.js";
import { runInline } from "./executor.js";
import { inlineContext, type Invocation } from "./invocation.js";

export class RpcRuntime {
  readonly #core: ServerCore;

  constructor(core: ServerCore) {
    this.#core = core;
  }

  async run(invocation: Invocation): Promise<unknown> {
    invocation.call.phase = "run";
    return runInline(invocation.entry, inlineContext(invocation, invocation.clientSignal), invocation.args);
  }

  /** Breaker states and queue lengths, for getStatus and metrics. */
  status(): Record<string, unknown> {
    void this.#core;
    return {};
  }

  async close(): Promise<void> {}
}
