/**
 * Routes that boot hooks register with `registerServerRoute(prefix, handler)` (docs/guides/server-methods.md
 * "Boot hooks"). Checked when registered, so that a bad prefix fails its item at start:
 * a prefix is one or more plain path segments, may not overlap the server's own paths,
 * and belongs to one item only. At request time the longest matching prefix wins.
 */
import type { ServerRouteHandler } from "../plugin-api/boot-api.js";
import type { TargetKind } from "./registry.js";

/** Paths the server answers itself; no route may claim them or anything below them. */
export const RESERVED_PREFIXES = ["/__rpc", "/__app", "/proxy", "/health", "/metrics"] as const;

const SEGMENT = /^[A-Za-z0-9._~-]+$/;

export interface ServerRoute {
  prefix: string;
  handler: ServerRouteHandler;
  kind: Exclude<TargetKind, "server">;
  id: string;
}

export class ServerRoutes {
  readonly #routes = new Map<string, ServerRoute>();

  register(kind: ServerRoute["kind"], id: string, prefix: unknown, handler: unknown): void {
    if (typeof handler !== "function") throw new Error(`registerServerRoute: the handler for ${String(prefix)} must be a function`);
    const normalised = normalisePrefix(prefix);
    const taken = this.#routes.get(normalised);
    if (taken) {
      throw new Error(`registerServerRoute: ${normalised} is already registered by ${taken.kind} ${taken.id}; ${kind} ${id} cannot register it too`);
    }
    this.#routes.set(normalised, { prefix: normalised, handler: handler as ServerRouteHandler, kind, id });
  }

  /** Drops what a failed item registered. */
  removeItem(kind: ServerRoute["kind"], id: string): void {
    for (const [prefix, route] of this.#routes) if (route.kind === kind && route.id === id) this.#routes.delete(prefix);
  }

  all(): ServerRoute[] {
    return [...this.#routes.values()];
  }
}

function normalisePrefix(prefix: unknown): string {
  if (typeof prefix !== "string" || !prefix.startsWith("/")) {
    throw new Error(`registerServerRoute: the prefix must be a string starting with "/", got ${JSON.stringify(prefix)}`);
  }
  const trimmed = prefix.length > 1 && prefix.endsWith("/") ? prefix.slice(0, -1) : prefix;
  const segments = trimmed.slice(1).split("/");
  if (trimmed === "/" || segments.some((segment) => !SEGMENT.test(segment) || segment === "." || segment === "..")) {
    throw new Error(`registerServerRoute: ${JSON.stringify(prefix)} is not a route prefix: use one or more path segments of letters, digits and . _ ~ -`);
  }
  for (const reserved of RESERVED_PREFIXES) {
    if (trimmed.toLowerCase() === reserved || trimmed.toLowerCase().startsWith(reserved + "/")) {
      throw new Error(`registerServerRoute: ${trimmed} overlaps the server's own ${reserved}`);
    }
  }
  return trimmed;
}
