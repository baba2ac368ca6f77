import { StartupError } from "../errors/http-error.js";

/** `<% NAME %>`, `<% NAME:-default %>` (unset or empty) or `<% NAME-default %>` (unset only). */
const REFERENCE = /<%\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:(:-|-)(.*?))?\s*%>/g;

/**
 * Replaces `<% NAME %>` in every string value with the environment variable NAME
 * (docs/reference/configuration.md). An unset variable without a default is a startup error naming
 * the key path, so a deployment never runs with an empty API key in an upstream header.
 * Every value taken from the environment is collected into `substituted`, the set of
 * values the logger masks; a default written in the file is not a secret.
 */
export function substituteEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  substituted: Set<string> = new Set(),
  path: string[] = [],
): unknown {
  if (typeof value === "string") {
    return value.replace(REFERENCE, (_match, name: string, operator: string | undefined, fallback: string | undefined) => {
      const resolved = env[name];
      if (operator === ":-" && (resolved === undefined || resolved === "")) return fallback ?? "";
      if (operator === "-" && resolved === undefined) return fallback ?? "";
      if (operator === "-" && resolved === "") return "";
      // Empty counts as unset: an empty API key or token is a deployment mistake, and an
      // empty metrics token would silently mean "no token".
      if (resolved === undefined || resolved === "") {
        throw new StartupError(
          "STARTUP_ENV_MISSING",
          `config key ${formatPath(path)} references environment variable ${name}, which is ${resolved === undefined ? "not set" : "empty"}`,
        );
      }
      // A value kept out of the file is a secret: it is masked in every log line.
      substituted.add(resolved);
      return resolved;
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => substituteEnv(item, env, substituted, [...path, String(index)]));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = substituteEnv(item, env, substituted, [...path, key]);
    return out;
  }
  return value;
}

export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path.length === 0 ? "(root)" : path.map(String).join(".");
}
