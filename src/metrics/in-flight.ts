/**
 * Requests being served right now, counted on the raw `node:http` server so that every
 * route counts (RPC calls, proxied streams, static files) from the first byte to the
 * closed response. Feeds getStatus (per worker) and the in-flight gauge.
 */
import type { Server } from "node:http";

export class InFlightCounter {
  #requests = 0;
  #rpc = 0;

  attach(server: Server): void {
    // First in line: Fastify's own listener may run a whole handler before it returns.
    server.prependListener("request", (request, response) => {
      const rpc = request.url?.startsWith("/__rpc/") === true;
      this.#requests += 1;
      if (rpc) this.#rpc += 1;
      response.once("close", () => {
        this.#requests -= 1;
        if (rpc) this.#rpc -= 1;
      });
    });
  }

  snapshot(): { requests: number; rpc: number } {
    return { requests: this.#requests, rpc: this.#rpc };
  }
}
