/**
 * `node index.js`: one process serving one app root. Start-up errors print one line and
 * exit 1; SIGTERM/SIGINT stop accepting, let in-flight calls finish (bounded by
 * `server.shutdownTimeoutMs`) and exit 0.
 */
import { StartupError } from "../errors/http-error.js";
import { createServer, type AppServer } from "../server/create-server.js";
import { USAGE, readCliOptions } from "./options.js";

export async function main(argv = process.argv.slice(2), env = process.env): Promise<void> {
  let server: AppServer;
  try {
    const options = readCliOptions(argv, env);
    if (options === "help") {
      process.stdout.write(USAGE + "\n");
      return;
    }
    server = await createServer({ ...options, env });
    await server.listen();
  } catch (error) {
    fail(error);
    return;
  }
  stopOnSignals(server);
}

function stopOnSignals(server: AppServer): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const limitMs = server.core.config.shutdownTimeoutMs;
    server.log.info({ signal, limitMs }, "shutting down: no new connections, waiting for in-flight calls");
    const force = setTimeout(() => {
      server.log.warn({ limitMs }, "in-flight calls did not finish in time; exiting");
      server.log.flush?.();
      process.exit(0);
    }, limitMs);
    force.unref();
    server.close().then(
      () => {
        server.log.info("stopped");
        server.log.flush?.();
        process.exit(0);
      },
      (error: unknown) => {
        server.log.error({ err: error }, "error while shutting down");
        server.log.flush?.();
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

function fail(error: unknown): void {
  const message = error instanceof StartupError ? error.message : (error as Error)?.stack ?? String(error);
  process.stderr.write(`counterpart: ${message}\n`);
  process.exitCode = 1;
}
