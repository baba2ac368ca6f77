/**
 * The server's shared state, built once at start and handed to each part of the request
 * path. Verifiers receive it as `core`.
 */
import type { ResolvedConfig } from "../config/resolve.js";
import type { Registry } from "../discovery/registry.js";
import type { ServerOnlyFiles } from "../discovery/server-only-files.js";
import type { Logger } from "../log/logger.js";
import type { SecretMask } from "../log/mask-secrets.js";
import type { LogRingBuffer } from "../log/ring-buffer.js";
import type { SessionSigner } from "../auth/session.js";
import type { SessionCheck } from "../auth/session-cache.js";
import type { VerifierRegistry } from "../auth/verifier-registry.js";
import type { RpcVerifier } from "../auth/rpc-verifiers.js";
import type { ProxyVerifier } from "../proxy/verifiers.js";
import type { RpcEventRecord } from "../rpc/answer.js";

/** What every proxied request ends with, for listeners such as metrics. */
export interface ProxyEventRecord {
  event: string;
  /** The configured alias, or null when the request named none that exists. */
  alias: string | null;
  method: string;
  status: number;
  durationMs: number;
}

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
  sessions: SessionSigner;
  /** `sessions` with each cookie's checks remembered: what the request paths use. */
  sessionChecks: SessionCheck;
  rpcVerifiers: VerifierRegistry<RpcVerifier>;
  proxyVerifiers: VerifierRegistry<ProxyVerifier>;
  startedAt: number;
  version: string;
  /** Called once at the end of every RPC call (metrics hang here). */
  rpcEventListeners: Array<(record: RpcEventRecord) => void>;
  /** Called once at the end of every proxied request. */
  proxyEventListeners: Array<(record: ProxyEventRecord) => void>;
}
