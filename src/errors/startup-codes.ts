/**
 * Why a server could not start (README "Start-up errors"), declared once. `createServer`
 * rejects with a `StartupError` carrying one of these as `code`, so that an embedding
 * program or a test can tell a port in use from a config typo without reading messages.
 * Part of the public contract like the client error codes: never rename one.
 */
export const STARTUP_ERROR_CODES = {
  /** A command-line flag or its environment variable (`APP_PORT`, `APP_WORKERS`) is malformed. */
  STARTUP_BAD_ARGUMENTS: "a flag or its environment variable is malformed",
  /** The config file does not exist, cannot be read or is not JSON. */
  STARTUP_CONFIG_UNREADABLE: "the config file cannot be read",
  /** A config value is refused (the message names every key path at fault). */
  STARTUP_CONFIG_INVALID: "the config is invalid",
  /** The config or a secret names an environment variable that is not set. */
  STARTUP_ENV_MISSING: "a referenced environment variable is not set",
  /** `APP_SESSION_SECRET` or a JWT secret is too short. */
  STARTUP_WEAK_SECRET: "a secret is too short",
  /** The app root does not exist or is not a readable folder. */
  STARTUP_ROOT_UNREADABLE: "the app root cannot be read",
  /** A plugin or module failed to load and the start is strict, or its files conflict. */
  STARTUP_ITEM_FAILED: "a plugin or module failed to load",
  /** A verifier context or proxy alias names a verifier nothing registered. */
  STARTUP_UNKNOWN_VERIFIER: "a verifier named in the config does not exist",
  /** The port is in use, or the address cannot be bound. */
  STARTUP_LISTEN_FAILED: "the server cannot listen on the address",
} as const;

export type StartupErrorCode = keyof typeof STARTUP_ERROR_CODES;
