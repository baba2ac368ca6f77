/**
 * What every RPC call and proxied request ends with, besides its log line: a small record
 * handed to listeners such as metrics. Declared here, below every part that emits or reads
 * them, so the gateway, the proxy and metrics never import each other.
 */
export interface RpcEventRecord {
  event: string;
  kind: string;
  id: string;
  method: string;
  status: number;
  code: string | undefined;
  durationMs: number;
  /** A streaming answer's events and body bytes on the wire; undefined unless its stream opened. */
  events: number | undefined;
  bytes: number | undefined;
}

export interface ProxyEventRecord {
  event: string;
  /** The configured alias, or null when the request named none that exists. */
  alias: string | null;
  method: string;
  status: number;
  /** The error code of a refused or failed request; undefined when it was forwarded and answered. */
  code: string | undefined;
  durationMs: number;
}

/** The listeners of one server, called once per call or request after its log line. */
export interface EventListeners {
  rpc: Array<(record: RpcEventRecord) => void>;
  proxy: Array<(record: ProxyEventRecord) => void>;
}
