import type { LookupAddress, LookupOptions } from "node:dns";
import type { LookupFunction } from "node:net";
import type { Agent } from "undici";
import type { ResolvedAddress } from "./validate-url.js";

/*
 * Connections go only to addresses the guard validated: each undici Agent answers the
 * socket's DNS lookup from a fixed list instead of asking DNS again, which closes the
 * rebinding window between check and connect (a name that resolved to a public address
 * for the check and to 127.0.0.1 a moment later).
 *
 * Why one Agent per (origin, validated addresses) rather than one shared Agent with a
 * per-request lookup: an Agent pools keep-alive sockets by origin, so a shared one would
 * hand a request pinned to address B a socket opened earlier to address A. Keying the
 * Agent by the addresses too means a pooled socket is only ever reused for the very
 * address set it was opened to; a name whose answers change gets a new Agent, and the
 * old one is closed once it falls out of the small LRU below.
 *
 * TLS is unaffected by the pinning: undici still passes the URL's host name as `host`
 * and `servername` to `tls.connect`, so SNI and certificate checks use the name, while
 * only `lookup` (ignored by Node for IP literals) supplies the address.
 */

const MAX_AGENTS = 64;

export class PinnedAgents {
  readonly #agents = new Map<string, Agent>();

  /** The Agent for `origin` that connects only to `addresses` (non-empty); `AgentClass` is undici's, once loaded. */
  get(AgentClass: typeof Agent, url: URL, addresses: readonly ResolvedAddress[]): Agent {
    const key = `${url.origin} ${addresses.map((a) => a.address).sort().join(",")}`;
    let agent = this.#agents.get(key);
    if (agent !== undefined) {
      this.#agents.delete(key); // re-inserted below: most recently used goes last
    } else {
      agent = new AgentClass({ connect: { lookup: pinnedLookup(url.hostname, addresses) } });
    }
    this.#agents.set(key, agent);
    this.#evict();
    return agent;
  }

  /** Closes every Agent; requests in flight finish first (undici's graceful close). */
  async close(): Promise<void> {
    const agents = [...this.#agents.values()];
    this.#agents.clear();
    await Promise.all(agents.map((agent) => agent.close()));
  }

  #evict(): void {
    for (const [key, agent] of this.#agents) {
      if (this.#agents.size <= MAX_AGENTS) return;
      this.#agents.delete(key);
      // Graceful: a response still streaming from this Agent is not cut off.
      agent.close().catch(() => {});
    }
  }
}

function pinnedLookup(hostname: string, addresses: readonly ResolvedAddress[]): LookupFunction {
  return (requested: string, options: LookupOptions, callback) => {
    // The Agent only ever serves its own origin; any other name is a bug, not a lookup.
    if (requested !== hostname) {
      callback(lookupError(`refusing to resolve ${requested} on a connection pinned to ${hostname}`), "");
      return;
    }
    const family = requestedFamily(options);
    const usable: LookupAddress[] = addresses.filter((a) => family === 0 || a.family === family);
    const first = usable[0];
    if (first === undefined) {
      callback(lookupError(`no validated IPv${family} address for ${hostname}`), "");
    } else if (options.all === true) {
      callback(null, usable.map((a) => ({ address: a.address, family: a.family })));
    } else {
      callback(null, first.address, first.family);
    }
  };
}

function requestedFamily(options: LookupOptions): 0 | 4 | 6 {
  if (options.family === 4 || options.family === "IPv4") return 4;
  if (options.family === 6 || options.family === "IPv6") return 6;
  return 0;
}

function lookupError(message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code: "ENOTFOUND" });
}
