/**
 * One cluster worker: the same server as `index.js`, listening on the port the master
 * shares among its workers, with dev logs, status and metrics delegated to the master.
 * A start-up failure is reported to the master (which prints it once and stops) instead of
 * printed here, so that N workers failing alike make one line, not N.
 */
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
  stopOnSignals(server);
}
