/**
 * A session store that cannot be reached (docs/guides/sessions-and-state.md): only the calls that read
 * or write session data answer 503 SESSION_STORE_UNAVAILABLE; everything else, the session's
 * id included, keeps working, and the breaker does not count the outage against the method.
 * The store here is one whose load and save fail the way every real store reports being
 * unreachable; Redis itself going away is tested in test/state/redis*.test.ts.
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { useServer } from "../helpers/server.js";
import { openViewer, rpc, send } from "../helpers/http.js";
import { errorOf } from "../../dist/errors/http-error.js";
import type { SessionStore } from "../../dist/index.js";

const unreachable: SessionStore = {
  kind: "redis",
  load: () => Promise.reject(errorOf("SESSION_STORE_UNAVAILABLE")),
  save: () => Promise.reject(errorOf("SESSION_STORE_UNAVAILABLE")),
  close: () => Promise.resolve(),
};

const app = useServer({ root: join(import.meta.dirname, "../fixtures/session-app"), sessionStore: unreachable });

describe("with the session store down", () => {
  it("answers 503 to calls that use session data, and serves the rest", async () => {
    const viewer = await openViewer(app.url);
    const reading = await rpc(app.url, "plugin/notes/recall", { viewer, body: { args: ["color"] } });
    expect([reading.status, reading.body.code]).toEqual([503, "SESSION_STORE_UNAVAILABLE"]);
    const writing = await rpc(app.url, "plugin/notes/remember", { viewer, body: { args: [{ key: "color", value: "red" }] } });
    expect([writing.status, writing.body.code]).toEqual([503, "SESSION_STORE_UNAVAILABLE"]);
    // Returning the session object means listing its data: the same answer, not a bad result.
    const whole = await rpc(app.url, "plugin/notes/whole", { viewer });
    expect([whole.status, whole.body.code]).toEqual([503, "SESSION_STORE_UNAVAILABLE"]);
    // The id needs no store; the same goes for an isolated method.
    const peek = await rpc(app.url, "plugin/notes/renameSession", { viewer });
    expect([peek.status, peek.body.result]).toEqual([200, "refused: TypeError"]);
    const isolated = await rpc(app.url, "plugin/notes/isolatedRecall", { viewer, body: { args: ["color"] } });
    expect([isolated.status, isolated.body.code]).toEqual([503, "SESSION_STORE_UNAVAILABLE"]);
  });

  it("a route that uses session data answers 503 too, not a generic 500", async () => {
    const viewer = await openViewer(app.url);
    const answer = await send(app.url, "/notes-flow/start?state=x", { headers: { cookie: viewer.cookie } });
    expect([answer.status, answer.json?.code]).toEqual([503, "SESSION_STORE_UNAVAILABLE"]);
  });
});
