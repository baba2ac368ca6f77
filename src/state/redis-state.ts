/**
 * Everything `server.redis` provides, on one connection per process (docs/guides/deployment.md
 * "Shared state and Redis"): session data, shared circuit breakers and deployment-wide
 * concurrency slots. Made by the composition root (src/app/create-server.ts) when
 * `server.redis` is set, closed with the server.
 */
import type { RedisSettings } from "../config/resolve.js";
import type { Logger } from "../log/logger.js";
import { RedisBreakerStore } from "./redis-breaker-store.js";
import { RedisConnection } from "./redis-connection.js";
import { RedisDeploymentSlots } from "./redis-deployment-slots.js";
import { RedisSessionStore } from "./redis-session-store.js";
import type { SharedState } from "./shared-state.js";

export interface RedisState extends SharedState {
  readonly connection: RedisConnection;
  readonly sessionStore: RedisSessionStore;
  /** `kind`, `ready` and the address (never the URL, which may carry a password), for getStatus. */
  status(): { kind: "redis"; ready: boolean; address: string };
  close(): Promise<void>;
}

/**
 * Connects in the background: a Redis that is down at start does not stop the server
 * (the calls that need it answer 503 until it is reachable). `whenReady` on the
 * connection lets the caller wait a little for it.
 */
export function createRedisState(settings: RedisSettings, log: Logger): RedisState {
  const connection = new RedisConnection(settings, log);
  return {
    kind: "redis",
    connection,
    get ready() {
      return connection.ready;
    },
    sessionStore: new RedisSessionStore(connection),
    breakers: new RedisBreakerStore(connection, log),
    slots: new RedisDeploymentSlots(connection, settings.leaseMs, log),
    status: () => ({ kind: "redis", ready: connection.ready, address: connection.address }),
    close: () => connection.close(),
  };
}
