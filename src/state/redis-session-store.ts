/**
 * Session data in Redis (docs/guides/sessions-and-state.md; docs/guides/deployment.md "Shared state and
 * Redis"): every process and host using that Redis sees the same data. One hash per
 * session, `<prefix>sess:<id>`, whose fields are the data's names and JSON texts; it
 * expires with the session.
 *
 * A save is one Lua script, so that a call's changes land together or not at all, and the
 * size check sees the session as it is at that moment in Redis, whoever wrote it last.
 */
import type { Redis } from "ioredis";
import { errorOf } from "../errors/http-error.js";
import { storeUnavailable, type RedisConnection } from "./redis-connection.js";
import type { SessionChanges, SessionStore } from "./session-store.js";

/**
 * KEYS[1] the session's hash; ARGV: maxBytes, expiresAtMs, how many fields are set, then
 * name and JSON text of each, then the names deleted. Returns -1, changing nothing, when
 * the data would exceed maxBytes (the sum of each field's name and value in bytes: Lua's
 * `#` counts bytes, as `fieldBytes` does), else the data's size. `unpack` runs in chunks:
 * Lua refuses to unpack more than a few thousand values at once.
 */
const SAVE_SCRIPT = `
local key = KEYS[1]
local maxBytes = tonumber(ARGV[1])
local setCount = tonumber(ARGV[3])
local lastSet = 3 + 2 * setCount
local fields = {}
local current = redis.call('HGETALL', key)
for i = 1, #current, 2 do fields[current[i]] = current[i + 1] end
for i = 4, lastSet, 2 do fields[ARGV[i]] = ARGV[i + 1] end
for i = lastSet + 1, #ARGV do fields[ARGV[i]] = nil end
local total = 0
local count = 0
for name, json in pairs(fields) do
  total = total + #name + #json
  count = count + 1
end
if total > maxBytes then return -1 end
if count == 0 then
  redis.call('DEL', key)
  return 0
end
local chunk = 1000
for first = 4, lastSet, chunk do
  redis.call('HSET', key, unpack(ARGV, first, math.min(first + chunk - 1, lastSet)))
end
for first = lastSet + 1, #ARGV, chunk do
  redis.call('HDEL', key, unpack(ARGV, first, math.min(first + chunk - 1, #ARGV)))
end
redis.call('PEXPIREAT', key, ARGV[2])
return total
`;

const SAVE_COMMAND = "counterpartSessionSave";

type SaveCommand = (key: string, ...args: string[]) => Promise<number>;

export class RedisSessionStore implements SessionStore {
  readonly kind = "redis" as const;
  readonly #client: Redis;

  constructor(connection: RedisConnection) {
    this.#client = connection.client;
    this.#client.defineCommand(SAVE_COMMAND, { numberOfKeys: 1, lua: SAVE_SCRIPT });
  }

  async load(id: string): Promise<ReadonlyMap<string, string>> {
    let fields: Record<string, string>;
    try {
      fields = await this.#client.hgetall(sessionKey(id));
    } catch (error) {
      throw storeUnavailable(error);
    }
    // Own entries only: the data's names are the methods' choice (`__proto__` included).
    return new Map(Object.entries(fields));
  }

  async save(id: string, changes: SessionChanges, expiresAtMs: number, maxBytes: number): Promise<void> {
    const args = [String(maxBytes), String(Math.trunc(expiresAtMs)), String(changes.set.length)];
    for (const [name, json] of changes.set) args.push(name, json);
    args.push(...changes.deleted);
    const save = (this.#client as unknown as Record<typeof SAVE_COMMAND, SaveCommand>)[SAVE_COMMAND];
    let size: number;
    try {
      size = await save.call(this.#client, sessionKey(id), ...args);
    } catch (error) {
      throw storeUnavailable(error);
    }
    if (size < 0) throw errorOf("SESSION_DATA_TOO_LARGE", { maxBytes });
  }

  /** The connection is the server's, shared with breakers and slots: closed with them. */
  async close(): Promise<void> {}
}

/** Relative to the connection's key prefix, which ioredis puts in front. */
function sessionKey(id: string): string {
  return `sess:${id}`;
}
