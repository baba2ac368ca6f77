// docs/reference/log-events.md: exactly one rpc.* event per call, with its fields, and no credential of the
// request in any line — neither in the events nor where a method logs its request headers.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { useServer } from "../helpers/server.js";
import { rpc } from "../helpers/http.js";
import { tempApp } from "../helpers/app-root.js";

const ROOT = join(import.meta.dirname, "../fixtures/gateway-app");

describe("rpc.* events", () => {
  const app = useServer({ root: ROOT });

  it("logs exactly one event per call with the fields docs/reference/log-events.md lists", async () => {
    const before = app.logs.events().length;
    await rpc(app.url, "plugin/matrix/echo", { viewer: app.viewer, body: { contextId: "strict" }, headers: { "x-token": "t0k" } });
    await rpc(app.url, "plugin/matrix/sessionOnly");
    await rpc(app.url, "plugin/matrix/nope", { viewer: app.viewer });
    const events = app.logs.events().slice(before);
    expect(events.map((event) => [event.event, event.status, event.code])).toEqual([
      ["rpc.complete", 200, undefined],
      ["rpc.rejected", 401, "RPC_NO_SESSION"],
      ["rpc.rejected", 404, "RPC_UNKNOWN_METHOD"],
    ]);
    expect(events[0]).toMatchObject({ kind: "plugin", id: "matrix", method: "echo", contextId: "strict", pid: process.pid });
    expect(events[0]!.reqId).toEqual(expect.any(String));
    expect(events[0]!.durationMs).toEqual(expect.any(Number));
    expect(events[0]!.time).toEqual(expect.any(Number));
    expect(events[1]!.contextId).toBeNull();
  });

  it("never writes the cookie, CSRF token or Authorization header to the log", async () => {
    await rpc(app.url, "plugin/matrix/boom", { viewer: app.viewer, headers: { authorization: "Bearer sekrit-token-value" } });
    const text = app.logs.text();
    expect(text).not.toContain(app.viewer.csrf);
    expect(text).not.toContain(app.viewer.cookie.split("=")[1]);
    expect(text).not.toContain("sekrit-token-value");
  });
});

describe("request headers a method logs", () => {
  const LOGS_HEADERS = `export function logHeaders(ctx) {
    ctx.log.info({ req: { headers: ctx.req.headers } }, "as req.headers");
    ctx.log.info({ headers: ctx.req.headers }, "as headers");
    return true;
  }`;
  const app = useServer({ root: tempApp({ files: { "plugins/p/p.server.mjs": LOGS_HEADERS } }), config: {} });

  it("show Authorization, Proxy-Authorization, Cookie and X-APP-CSRF as [Redacted], other headers as they are", async () => {
    const headers = { authorization: "Bearer header-token-value", "proxy-authorization": "Basic cHJveHk6c2VjcmV0", "x-trace": "trace-7" };
    expect((await rpc(app.url, "plugin/p/logHeaders", { viewer: app.viewer, headers })).body).toEqual({ result: true });
    const logged = [
      app.logs.lines.find((line) => line.msg === "as req.headers")?.req as { headers: Record<string, string> },
      app.logs.lines.find((line) => line.msg === "as headers"),
    ].map((line) => line!.headers as Record<string, string>);
    for (const seen of logged) {
      expect(seen).toMatchObject({
        authorization: "[Redacted]",
        "proxy-authorization": "[Redacted]",
        cookie: "[Redacted]",
        "x-app-csrf": "[Redacted]",
        "x-trace": "trace-7",
      });
    }
    const text = app.logs.text();
    for (const credential of ["header-token-value", "cHJveHk6c2VjcmV0", app.viewer.csrf, app.viewer.cookie.split("=")[1]!]) expect(text).not.toContain(credential);
  });
});
