/**
 * One cluster worker: the same server as `index.js`, listening on the port the master
 * shares among its workers, with dev logs, status and metrics delegated to the master.
 * A start-up failure is reported to the master (which prints it once and stops) instead of
 * printed here, so that N workers failing alike make one line, not N.
 */
import cluster from "node:cluster";
import { readCliOptions } from "../cli/options.js";
import { StartupError } from "../errors/http-error.js";
import { createServer, type AppServer } from "../app/create-server.js";
import { stopOnSignals } from "../app/shutdown.js";
import { WorkerLink } from "./worker-link.js";

export async function runWorker(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const link = new WorkerLink();
  let server: AppServer;
  try {
    const options = readCliOptions(argv, env);
    // The master answers these itself and never forks; a worker has nothing to serve.
    if (options === "help" || options === "version") return;
    // `--port 0` too: node:cluster gives every worker, replacements included, the port the
    // first one got, as long as one worker holds it.
    server = await createServer({ ...options, env, cluster: link, sessionStore: link.sessionStore });
    link.ready(await server.listen());
  } catch (error) {
    const message = error instanceof StartupError ? error.message : (error as Error)?.stack ?? String(error);
    await link.startupFailed(message);
    process.exit(1);
  }
  stopOnSignals(server, leaveCluster);
}

/** How long a stopped worker waits for the master's answer before it exits all the same. */
const LEAVE_TIMEOUT_MS = 1_000;

/**
 * Exits once the master can no longer hand this worker a connection. The master may have
 * sent one in the moment the server closed: it is still on its way, and a worker that
 * exited at once would lose it (the master neither gets it back nor closes it, so its
 * client, a load balancer's probe say, waits until the master exits). `disconnect()`
 * waits for the master's answer first; the channel keeps its order, so by then every such
 * connection has arrived and gone back to the master, which gives it to a worker still
 * serving.
 */
function leaveCluster(code: number): void {
  const worker = cluster.worker;
  if (!worker || !process.connected) {
    process.exit(code);
    return;
  }
  setTimeout(() => process.exit(code), LEAVE_TIMEOUT_MS).unref();
  process.once("disconnect", () => process.exit(code));
  worker.disconnect();
}
