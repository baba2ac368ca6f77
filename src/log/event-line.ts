/**
 * The one log event of each RPC call and proxied request (docs/reference/log-events.md),
 * written as the very line pino would write (its level, time, bindings and message keys,
 * through its secret-masking hook to its destination) without pino's general-purpose path
 * for arbitrary objects: a loop over the fields' names that escapes each name anew, redaction
 * paths tried on every line, a message format step. Measured alone on Node 24, pino took
 * 2.9–3.1 µs per call's event and this 1.8–2.0 µs; the gateway's echo spent 6 % less CPU
 * per call with it (docs/reference/benchmarks.md "Profiles").
 * An event that carries an error, and any logger whose lines need more than this (a
 * destination that reads pino's metadata, as the dev mode's multistream does, a mixin or
 * log formatter), is logged by pino itself.
 */
import { pino, type Logger } from "pino";

/**
 * An event's fields. Strings, numbers, booleans and null are written here, undefined ones
 * left out as pino does; any other value (an `err` to serialise) sends the event through pino.
 */
export type EventFields = Readonly<Record<string, unknown>>;

export type EventLevel = "info" | "warn" | "error";

const LEVEL_VALUES: Record<EventLevel, number> = { info: 30, warn: 40, error: 50 };
const { lsCacheSym, timeSym, chindingsSym, streamSym, endSym, messageKeySym, hooksSym, mixinSym, formattersSym, nestedKeySym } = pino.symbols;
/** Set on a destination (pino's multistream) that reads the level and object of each line beside its text. */
const NEEDS_METADATA = Symbol.for("pino.metadata");

/** Text JSON can carry between quotes as it is: no quote, backslash, control character or lone surrogate half. */
const PLAIN_TEXT = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

interface PinoInternals {
  [key: symbol]: unknown;
}

export class EventLog {
  readonly #logger: Logger;
  readonly #internals: PinoInternals;
  /** False when this logger's lines need pino's own path. */
  readonly #direct: boolean;
  /** The field names of this kind of event in their usual order, and `,"<name>":` for each. */
  readonly #keys: readonly string[];
  readonly #prefixes: readonly string[];
  /** The same for names outside that list, made on first use. */
  readonly #otherPrefixes = new Map<string, string>();
  /** `,"msg":`, or whatever the logger's message key is. */
  readonly #messagePrefix: string;

  /** `keys`: the fields this log's events usually have, in the order the caller writes them. */
  constructor(logger: Logger, keys: readonly string[] = []) {
    this.#logger = logger;
    this.#internals = logger as unknown as PinoInternals;
    this.#keys = keys;
    this.#prefixes = keys.map((key) => `,${jsonString(key)}:`);
    this.#messagePrefix = `,${jsonString(this.#internals[messageKeySym] as string)}:`;
    const formatters = this.#internals[formattersSym] as { log?: unknown } | undefined;
    const stream = this.#internals[streamSym] as { write?: unknown; [NEEDS_METADATA]?: unknown } | undefined;
    this.#direct =
      typeof stream?.write === "function" &&
      stream[NEEDS_METADATA] !== true &&
      !this.#internals[mixinSym] &&
      !formatters?.log &&
      !this.#internals[nestedKeySym] &&
      !logger.msgPrefix;
  }

  write(level: EventLevel, fields: EventFields, msg: string): void {
    const logger = this.#logger;
    const value = LEVEL_VALUES[level];
    if (!this.#direct || logger.levelVal > value) {
      logger[level](fields, msg);
      return;
    }
    const internals = this.#internals;
    const keys = this.#keys;
    let line = (internals[lsCacheSym] as Record<number, string>)[value] + (internals[timeSym] as () => string).call(logger) + (internals[chindingsSym] as string);
    let index = 0;
    for (const key in fields) {
      // A name in its usual place is one of the object's own (so is checked no further);
      // any other must be, as pino also requires.
      const usual = key === keys[index];
      index += 1;
      const field = fields[key];
      if (field === undefined || (!usual && !Object.hasOwn(fields, key))) continue;
      const json = jsonValue(field);
      if (json === undefined) {
        logger[level](fields, msg);
        return;
      }
      line += (usual ? this.#prefixes[index - 1] : this.#prefix(key)) + json;
    }
    line += this.#messagePrefix + jsonString(msg) + (internals[endSym] as string);
    const hook = (internals[hooksSym] as { streamWrite?: (line: string) => string }).streamWrite;
    (internals[streamSym] as { write(line: string): void }).write(hook ? hook(line) : line);
  }

  #prefix(key: string): string {
    let prefix = this.#otherPrefixes.get(key);
    if (prefix === undefined) {
      prefix = `,${jsonString(key)}:`;
      this.#otherPrefixes.set(key, prefix);
    }
    return prefix;
  }
}

/** The JSON of a flat value; undefined for anything else, which pino's serialisers are for. */
function jsonValue(value: unknown): string | undefined {
  switch (typeof value) {
    case "string":
      return jsonString(value);
    case "number":
      return Number.isFinite(value) ? String(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    default:
      return value === null ? "null" : undefined;
  }
}

function jsonString(text: string): string {
  return text.length < 128 && PLAIN_TEXT.test(text) ? `"${text}"` : JSON.stringify(text);
}
