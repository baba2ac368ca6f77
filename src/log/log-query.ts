/**
 * What a `getLogs` payload asks for (docs/guides/server-methods.md "Dev mode"), checked once where the call
 * arrives. The result is plain JSON, so a cluster worker can hand it to the master, which
 * reads its buffer with it (log-page.ts).
 *
 * `afterId` and `limit` answer 400 when they are not non-negative integers, as they always
 * have; the filters added for xOpat's viewer are lenient like xOpat's own server: a value of
 * the wrong type, or a level name it does not know, is ignored.
 */
import { errorOf } from "../errors/http-error.js";

export interface LogQuery {
  afterId: number;
  /** 1 to MAX_LOG_LIMIT. */
  limit: number;
  /** Lower-cased text a returned entry contains; null: no search. */
  search: string | null;
  /** The pino level names a returned entry has; null: every level. */
  levels: string[] | null;
}

export const DEFAULT_LOG_LIMIT = 200;
export const MAX_LOG_LIMIT = 500;

/**
 * The names a filter may use: xOpat's (`debug`, `info`, `log`, `warn`, `error`) and pino's
 * own. pino has no `log`, which is what `console.log` writes, so it means `info`; `trace`
 * and `fatal` lines would otherwise match no xOpat name, so `debug` takes trace lines too
 * and `error` takes fatal ones.
 */
const LEVEL_NAMES: Readonly<Record<string, readonly string[]>> = {
  trace: ["trace"],
  debug: ["trace", "debug"],
  log: ["info"],
  info: ["info"],
  warn: ["warn"],
  error: ["error", "fatal"],
  fatal: ["fatal"],
};

export function parseLogQuery(payload: unknown): LogQuery {
  const fields = typeof payload === "object" && payload !== null ? (payload as Record<string, unknown>) : {};
  const limit = integerOr(fields.limit, DEFAULT_LOG_LIMIT, "limit");
  return {
    afterId: integerOr(fields.afterId, 0, "afterId"),
    limit: Math.min(Math.max(limit, 1), MAX_LOG_LIMIT),
    search: searchOf(fields.search),
    levels: levelsOf([fields.level, fields.levels]),
  };
}

function integerOr(value: unknown, fallback: number, name: string): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw errorOf("RPC_BAD_REQUEST", { reason: `${name}-not-integer` }, `${name} must be a non-negative integer`);
  }
  return value;
}

function searchOf(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const text = value.trim().toLowerCase();
  return text === "" ? null : text;
}

/** `level` and `levels`, each a name, a comma-separated list or an array of either. */
function levelsOf(values: unknown[]): string[] | null {
  const names = values
    .flatMap((value) => (Array.isArray(value) ? value : [value]))
    .filter((value): value is string => typeof value === "string")
    .flatMap((value) => value.split(","))
    .map((name) => name.trim().toLowerCase());
  const levels = new Set(names.flatMap((name) => (Object.hasOwn(LEVEL_NAMES, name) ? LEVEL_NAMES[name]! : [])));
  return levels.size > 0 ? [...levels] : null;
}
