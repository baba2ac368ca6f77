/**
 * One server's state, built once at start by the composition root. Each part declares the
 * narrow options it needs (`RpcRouteOptions`, `ProxyRouteOptions`, …) and this object
 * satisfies them all, so no part imports this file. Plugin code never sees it: verifiers
 * get the frozen `facade`.
 */
import type { ResolvedConfig } from "../config/resolve.js";
import type { DevReload } from "../discovery/dev-reload.js";
import type { Registry } from "../discovery/registry.js";
import type { ServerOnlyFiles } from "../discovery/server-only-files.js";
import type { Logger } from "../log/logger.js";
import type { SecretMask } from "../log/mask-secrets.js";
import type { LogRingBuffer } from "../log/ring-buffer.js";
import type { SessionSigner } from "../auth/session.js";
import type { SessionCheck } from "../auth/session-cache.js";
import type { VerifierRegistry } from "../auth/verifier-registry.js";
import type { ProxyVerifier, RpcVerifier } from "../auth/verifier-types.js";
import type { CoreFacade } from "../core/facade.js";
import type { EventListeners } from "../log/events.js";
import type { ServerRoutes } from "../discovery/server-routes.js";
import type { SessionStore } from "../state/session-store.js";

export interface ServerCore {
  root: string;
  dev: boolean;
  config: ResolvedConfig;
  log: Logger;
  /** Masks configured secrets in an answer body exactly as in log lines; null when there are none. */
  maskSecrets: SecretMask | null;
  ringBuffer: LogRingBuffer | null;
  registry: Registry;
  /** Files below plugins/ and modules/ that server code imports: never served. */
  serverOnlyFiles: ServerOnlyFiles;
  /** Dev mode: brings server files up to date with the disk before each call; undefined otherwise. */
  devReload: DevReload | undefined;
  sessions: SessionSigner;
  /** `sessions` with each cookie's checks remembered: what the request paths use. */
  sessionChecks: SessionCheck;
  rpcVerifiers: VerifierRegistry<RpcVerifier>;
  proxyVerifiers: VerifierRegistry<ProxyVerifier>;
  startedAt: number;
  version: string;
  /** Called once at the end of every RPC call and proxied request (metrics hang here). */
  events: EventListeners;
  /** What plugin code is shown of this server, as `core` (proxy verifiers, dev methods); each item has its own. */
  facade: CoreFacade;
  /** Routes boot hooks registered. */
  serverRoutes: ServerRoutes;
  /** Where session data lives: this process, the cluster's master, or Redis (docs/guides/sessions-and-state.md). */
  sessionStore: SessionStore;
}
