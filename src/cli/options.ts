/**
 * Command-line flags and their environment twins (docs/guides/your-app.md). A flag wins over
 * its variable.
 */
import { parseArgs } from "node:util";
import { StartupError } from "../errors/http-error.js";
import { COMMANDS } from "./commands.js";

export interface CliOptions {
  port: number;
  host: string;
  root: string | undefined;
  config: string | undefined;
  dev: boolean;
  /** Undefined: `server.strictStartup` decides. */
  strict: boolean | undefined;
}

export const USAGE = `usage: node index.js [--port N] [--host H] [--root DIR] [--config FILE] [--dev] [--strict] [--version]

  --port N       port to listen on (APP_PORT, default 8080)
  --host H       address to bind (APP_HOST, default 127.0.0.1)
  --root DIR     the app root with public/, plugins/, modules/ (APP_ROOT, default: the bundled demo)
  --config FILE  config file (APP_CONFIG, default <root>/app.config.json when it exists)
  --dev          dev mode: dev routes, pretty logs, reload of edited server files (APP_DEV_MODE=1)
  --strict       exit when a plugin or module fails to load, instead of serving the rest (APP_STRICT=1)
  --version      print the version and exit

The author's commands (each takes --help):
${[...COMMANDS].map(([name, { summary }]) => `  counterpart ${name.padEnd(6)} ${summary}`).join("\n")}`;

export function readCliOptions(argv: string[], env: NodeJS.ProcessEnv): CliOptions | "help" | "version" {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        root: { type: "string" },
        config: { type: "string" },
        dev: { type: "boolean" },
        strict: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean" },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    throw new StartupError("STARTUP_BAD_ARGUMENTS", `${(error as Error).message}\n${USAGE}`);
  }
  const values = parsed.values;
  if (values.help) return "help";
  // Before the port and environment checks: asking for the version never fails on them.
  if (values.version) return "version";
  const portText = values.port ?? env.APP_PORT ?? "8080";
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) {
    throw new StartupError("STARTUP_BAD_ARGUMENTS", `${values.port !== undefined ? "--port" : "APP_PORT"} must be a port number, got "${portText}"`);
  }
  return {
    port,
    host: values.host ?? env.APP_HOST ?? "127.0.0.1",
    root: values.root ?? (env.APP_ROOT || undefined),
    config: values.config ?? (env.APP_CONFIG || undefined),
    dev: values.dev === true || env.APP_DEV_MODE === "1",
    strict: values.strict === true || env.APP_STRICT === "1" ? true : undefined,
  };
}
