/**
 * `node index.js`: one process serving one app root. Start-up errors print one line and
 * exit 1; SIGTERM/SIGINT stop taking new work, let in-flight calls finish (bounded by
 * `server.shutdownTimeoutMs`) and exit 0, and so does the end of the npm process that
 * started it (src/app/parent-watch.ts).
 */
import { StartupError } from "../errors/http-error.js";
import { ToolkitError } from "../authoring/toolkit-error.js";
import { whenParentGone } from "../app/parent-watch.js";
import { stopOnSignals } from "../app/shutdown.js";
import { createServer, type AppServer } from "../app/create-server.js";
import { COMMANDS } from "./commands.js";
import { USAGE, readCliOptions } from "./options.js";
import { packageVersion } from "./version.js";

export async function main(argv = process.argv.slice(2), env = process.env): Promise<void> {
  const command = argv[0] === undefined ? undefined : COMMANDS.get(argv[0]);
  if (command) {
    try {
      process.exitCode = await (await command.run())(argv.slice(1), env);
    } catch (error) {
      fail(error);
    }
    return;
  }
  let server: AppServer;
  try {
    const options = readCliOptions(argv, env);
    if (options === "help") {
      process.stdout.write(USAGE + "\n");
      return;
    }
    if (options === "version") {
      process.stdout.write(packageVersion() + "\n");
      return;
    }
    server = await createServer({ ...options, env });
    await server.listen();
  } catch (error) {
    fail(error);
    return;
  }
  const stop = stopOnSignals(server);
  whenParentGone(env, () => {
    server.log.warn("the npm process that started the server has ended (its shell passes no SIGTERM on): shutting down as on SIGTERM");
    stop("parent-gone");
  });
}

function fail(error: unknown): void {
  const message = error instanceof StartupError || error instanceof ToolkitError ? error.message : (error as Error)?.stack ?? String(error);
  process.stderr.write(`counterpart: ${message}\n`);
  process.exitCode = 1;
}
