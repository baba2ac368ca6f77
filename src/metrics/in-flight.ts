/**
 * Requests being served right now, counted on the raw `node:http` server so that every
 * route counts (RPC calls, proxied streams, static files) from the first byte to the
 * closed response. Feeds getStatus (per worker) and the in-flight gauge, and tells a
 * draining server when the last answer is out.
 */
import type { Server } from "node:http";

export class InFlightCounter {
  #requests = 0;
  #rpc = 0;

  readonly #idleWaiters: Array<() => void> = [];

  // Two shared listeners rather than a closure per request: this runs for every request.
  readonly #onClose = () => {
    this.#requests -= 1;
    if (this.#requests === 0 && this.#idleWaiters.length > 0) this.#wake();
  };
  readonly #onRpcClose = () => {
    this.#rpc -= 1;
    this.#onClose();
  };

  attach(server: Server): void {
    // First in line: Fastify's own listener may run a whole handler before it returns.
    // A response emits "close" once, so a plain listener does.
    server.prependListener("request", (request, response) => {
      this.#requests += 1;
      if (request.url?.startsWith("/__rpc/") === true) {
        this.#rpc += 1;
        response.on("close", this.#onRpcClose);
      } else {
        response.on("close", this.#onClose);
      }
    });
  }

  snapshot(): { requests: number; rpc: number } {
    return { requests: this.#requests, rpc: this.#rpc };
  }

  /** Resolves once no request is being served: at once when none is, else when the last one's response closes. */
  whenIdle(): Promise<void> {
    if (this.#requests === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #wake(): void {
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }
}
