/**
 * Graceful shutdown of one server process, shared by `index.js` and each cluster worker
 * (docs/guides/deployment.md "Graceful shutdown"): on SIGTERM or SIGINT turn not ready and answer
 * new work 503, let the calls and proxied streams under way finish within
 * `server.shutdownTimeoutMs` while the probes still answer, then stop listening, release
 * the isolation pool, exit 0.
 */
import type { AppServer } from "./create-server.js";

export type CloseOutcome = "closed" | "timed-out";

/**
 * `server.close()` bounded by `limitMs`. A socket whose call ends during the drain turns
 * idle and, left alone, would hold `close()` open until the client drops it (undici keeps
 * sockets for minutes). Sweeping idle sockets until the close completes lets the process go
 * as soon as the last answer is out, and sends a keep-alive client to reconnect elsewhere.
 * The first sweep is at once: a balancer's idle keep-alive connection to this process would
 * otherwise carry its next requests here, only to be answered 503.
 */
export async function closeGracefully(server: AppServer, limitMs: number): Promise<CloseOutcome> {
  const http = server.app.server;
  const sweep = setInterval(() => http.closeIdleConnections(), 50);
  sweep.unref();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<CloseOutcome>((resolve) => {
    timer = setTimeout(() => resolve("timed-out"), limitMs);
    timer.unref();
  });
  try {
    // Not ready and refusing new work from here on (close() turns so before it awaits).
    const closed = server.close();
    http.closeIdleConnections();
    return await Promise.race([closed.then((): CloseOutcome => "closed"), timedOut]);
  } finally {
    clearInterval(sweep);
    clearTimeout(timer);
  }
}

/**
 * Installs the SIGTERM/SIGINT handlers. Repeated signals are ignored rather than fatal: in a
 * terminal, Ctrl-C reaches a cluster worker both directly and forwarded by its master.
 */
export function stopOnSignals(server: AppServer, exit: (code: number) => void = (code) => process.exit(code)): (reason: NodeJS.Signals | "parent-gone") => void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals | "parent-gone") => {
    if (stopping) return;
    stopping = true;
    const limitMs = server.core.config.shutdownTimeoutMs;
    server.log.info({ signal, limitMs }, "shutting down: not ready, answering new requests 503, waiting for in-flight calls");
    closeGracefully(server, limitMs).then(
      (outcome) => {
        if (outcome === "timed-out") server.log.warn({ limitMs }, "in-flight calls did not finish in time; exiting");
        else server.log.info("stopped");
        server.log.flush?.();
        exit(0);
      },
      (error: unknown) => {
        server.log.error({ err: error }, "error while shutting down");
        server.log.flush?.();
        exit(1);
      },
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  return stop;
}
