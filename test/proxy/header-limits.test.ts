// docs/guides/proxy.md "Headers": the headers the server holds (static headers, verifiers'
// changes, X-Forwarded-*, the request id and trace) go upstream before the client's, so
// an upstream that keeps only its first N headers still gets the API key; and a request
// with more client headers than the proxy forwards is refused, never passed on. (Node's
// own parser takes up to about 1 000 headers in 16 KiB: the 900 below reach the proxy.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, send, type Viewer } from "../helpers/http.js";
import { TestUpstream } from "../helpers/upstream.js";

const ROOT = join(import.meta.dirname, "../fixtures/proxy-app");
const MAX_HEADERS = 64;
const MAX_HEADER_BYTES = 8 * 1024;

/** `count` client headers; numeric names too, which a plain object would list first. */
function manyHeaders(count: number): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < count; i += 1) headers[i % 2 === 0 ? `x-c${i}` : String(1000 + i)] = "1";
  return headers;
}

describe("proxy header limits", () => {
  // Its echo sees only the first 20 request headers: the rest are dropped.
  let upstream: TestUpstream;
  let app: TestServer;
  let viewer: Viewer;
  beforeAll(async () => {
    upstream = await new TestUpstream({ keepHeaders: 20 }).start();
    app = await startServer({
      root: ROOT,
      config: {
        server: {
          secure: {
            proxies: {
              open: { baseUrl: upstream.origin, headers: { "X-Api-Key": "server-key" } },
              keyed: { baseUrl: upstream.origin, auth: { enabled: true, verifiers: ["header-key"] } },
            },
          },
        },
      },
    });
    viewer = await openViewer(app.url);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });
  const serverErrors = () => app.logs.lines.filter((line) => Number(line.level) >= 50);

  it("sends the server-held headers first: an upstream that keeps only its first headers still gets them", async () => {
    const open = await send(app.url, "/proxy/open/first", { viewer, headers: manyHeaders(MAX_HEADERS) });
    expect(open.status).toBe(200);
    expect(open.json.headers).toMatchObject({ "x-api-key": "server-key", "x-forwarded-for": "127.0.0.1", "x-request-id": open.headers["x-request-id"], traceparent: expect.any(String) });
    // The upstream did drop some: the client's, at the end.
    expect(Object.keys(open.json.headers).filter((name) => name.startsWith("x-c")).length).toBeLessThan(MAX_HEADERS / 2);

    const keyed = await send(app.url, "/proxy/keyed/first", { viewer, headers: { ...manyHeaders(MAX_HEADERS - 1), "x-key": "open-sesame" } });
    expect(keyed.status).toBe(200);
    expect(keyed.json.headers).toMatchObject({ "x-api-key": "from-verifier", "x-verified": "header-key" });
    expect(serverErrors()).toEqual([]);
  });

  it(`refuses more than ${MAX_HEADERS} client headers, or more than 8 KiB of them, with 431 PROXY_HEADERS_TOO_LARGE`, async () => {
    const before = upstream.seen.length;
    const refused = [
      manyHeaders(900),
      manyHeaders(MAX_HEADERS + 1),
      { "x-big-1": "a".repeat(MAX_HEADER_BYTES / 2), "x-big-2": "b".repeat(MAX_HEADER_BYTES / 2) },
    ];
    for (const headers of refused) {
      const answer = await send(app.url, "/proxy/open/flood", { viewer, headers });
      expect([Object.keys(headers).length, answer.status, answer.json]).toEqual([
        Object.keys(headers).length,
        431,
        { error: "Too many or too large request headers for the proxy", code: "PROXY_HEADERS_TOO_LARGE", details: { maxHeaders: MAX_HEADERS, maxHeaderBytes: MAX_HEADER_BYTES } },
      ]);
    }
    expect(upstream.seen.length).toBe(before);
    // What the proxy drops does not count: the session cookie, X-APP-CSRF, Host, Connection.
    const atLimit = await send(app.url, "/proxy/open/limit", { viewer, headers: { ...manyHeaders(MAX_HEADERS), connection: "keep-alive, x-listed", "x-listed": "1" } });
    expect(atLimit.status).toBe(200);
    expect(app.logs.events("proxy.").filter((event) => event.code === "PROXY_HEADERS_TOO_LARGE").map((event) => [event.event, event.status])).toEqual([
      ["proxy.rejected", 431],
      ["proxy.rejected", 431],
      ["proxy.rejected", 431],
    ]);
    expect(serverErrors()).toEqual([]);
  });
});
