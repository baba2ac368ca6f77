/**
 * Reads, substitutes and validates app.config.json once at start, and turns it into the
 * resolved settings the rest of the server reads. Nothing here runs per request.
 */
import { readFile } from "node:fs/promises";
import sjson from "secure-json-parse";
import { StartupError } from "../errors/http-error.js";
import { describeIssues } from "./config-issues.js";
import { configSchema, type AppConfigFile, type AppConfigInput } from "./schema.js";
import { substituteEnv } from "./substitute-env.js";
import { resolveConfig, type ResolvedConfig } from "./resolve.js";

export async function loadConfigFile(file: string, env: NodeJS.ProcessEnv): Promise<ResolvedConfig> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new StartupError("STARTUP_CONFIG_UNREADABLE", `cannot read config file ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  let raw: unknown;
  try {
    // Rejects "__proto__" and "constructor.prototype" keys: a config file must not be a
    // way to reach Object.prototype through the registries built from it.
    raw = sjson.parse(text, null, { protoAction: "error", constructorAction: "error" });
  } catch (error) {
    throw new StartupError("STARTUP_CONFIG_UNREADABLE", `config file ${file} is not valid JSON: ${(error as Error).message}`);
  }
  return parseConfig(raw, env, file);
}

/**
 * Validates a config object (from a file or handed to `createServer`). Every problem the
 * schema finds is reported at once, so that a config with three typos takes one restart to
 * fix, not three: one problem is one line (`<source>: <key path>: <what is wrong>`), several
 * are a first line that counts them and one indented line each (docs/guides/your-app.md).
 */
export function parseConfig(raw: unknown, env: NodeJS.ProcessEnv, source = "config"): ResolvedConfig {
  const fromEnv = new Set<string>();
  const substituted = substituteEnv(raw ?? {}, env, fromEnv);
  const parsed = configSchema.safeParse(substituted);
  if (!parsed.success) {
    const problems = describeIssues(configSchema, parsed.error.issues);
    const message = problems.length === 1 ? `${source}: ${problems[0]}` : `${source}: ${problems.length} problems:\n${problems.map((line) => `  ${line}`).join("\n")}`;
    throw new StartupError("STARTUP_CONFIG_INVALID", message);
  }
  return resolveConfig(parsed.data as AppConfigFile, env, source, fromEnv);
}

export type { AppConfigInput };
