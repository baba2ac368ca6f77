/**
 * Why a server could not start, declared once with its cause (the table of
 * docs/reference/error-codes.md "Start-up errors", which scripts/docs.mjs writes from this one). `createServer`
 * rejects with a `StartupError` carrying one of these as `code`, so that an embedding
 * program or a test can tell a port in use from a config typo without reading messages.
 * Part of the public contract like the client error codes: never rename one.
 */
export const STARTUP_ERROR_CODES = {
  /** A command-line flag or its environment variable (`APP_PORT`, `APP_WORKERS`) is malformed. */
  STARTUP_BAD_ARGUMENTS: "a flag or its variable is malformed (`--port x`, `APP_WORKERS=0`)",
  /** The config file does not exist, cannot be read or is not JSON. */
  STARTUP_CONFIG_UNREADABLE: "the config file does not exist, cannot be read or is not JSON",
  /** A config value is refused (the message names every key path at fault). */
  STARTUP_CONFIG_INVALID: "a config value is refused; the message names the key path of every problem",
  /** The config or a secret names an environment variable that is not set. */
  STARTUP_ENV_MISSING: "the config (`<% NAME %>`, `secretEnv`) names an unset variable",
  /** `APP_SESSION_SECRET` or a JWT secret is too short. */
  STARTUP_WEAK_SECRET: "`APP_SESSION_SECRET` or a JWT secret is shorter than 32 bytes",
  /** The app root does not exist or is not a readable folder. */
  STARTUP_ROOT_UNREADABLE: "the app root is missing or not a folder",
  /** A plugin or module failed to load and the start is strict, or its files conflict. */
  STARTUP_ITEM_FAILED: "a plugin or module failed to load under `--strict`, or two of its files export one method",
  /** A verifier context or proxy alias names a verifier nothing registered. */
  STARTUP_UNKNOWN_VERIFIER: "a verifier context or proxy alias names a verifier nothing registered",
  /** The port is in use, or the address cannot be bound. */
  STARTUP_LISTEN_FAILED: "the port is in use or the address cannot be bound",
} as const;

export type StartupErrorCode = keyof typeof STARTUP_ERROR_CODES;
