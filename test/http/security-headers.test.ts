// docs/reference/configuration.md (`server.headers`) and "HTTP routes": X-Content-Type-Options and
// Referrer-Policy on every answer, the pages' CSP with a nonce per response, and what the
// config may change. The policy at work in a browser: test/static/csp-browser.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { parseConfig } from "../../dist/config/load.js";
import type { AppConfigInput } from "../../dist/config/schema.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, rpc, send, type RawAnswer, type Viewer } from "../helpers/http.js";
import { openStream } from "../helpers/stream.js";
import { TestUpstream } from "../helpers/upstream.js";

const ROOT = join(import.meta.dirname, "../fixtures/headers-app");

/** The page at `path`: its CSP header (either kind) and the nonces its script tags carry. */
async function page(url: string, path = "/") {
  const answer = await send(url, path);
  const nonces = [...answer.body.matchAll(/<script nonce="([^"]*)"/g)].map((match) => match[1]!);
  return { ...answer, csp: answer.headers["content-security-policy"], nonces };
}

describe("headers on every answer", () => {
  let upstream: TestUpstream;
  let app: TestServer;
  let viewer: Viewer;
  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    app = await startServer({ root: ROOT, dev: true, config: { server: { secure: { proxies: { up: { baseUrl: upstream.origin } } } } } });
    viewer = await openViewer(app.url);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it("carry X-Content-Type-Options: nosniff and Referrer-Policy: same-origin, whoever wrote the answer", async () => {
    const answers = {
      page: await send(app.url, "/"),
      file: await send(app.url, "/big.css"),
      client: await send(app.url, "/__app/client.js"),
      devConsole: await send(app.url, "/__app/dev"),
      rpc: await send(app.url, "/__rpc/plugin/probe/hello", { method: "POST", viewer, body: "{}", headers: { "content-type": "application/json" } }),
      rpcRefused: await send(app.url, "/__rpc/plugin/probe/hello", { method: "POST", body: "{}", headers: { "content-type": "application/json" } }),
      proxied: await send(app.url, "/proxy/up/x", { viewer }),
      proxyRefused: await send(app.url, "/proxy/up/x"),
      health: await send(app.url, "/health/live"),
      missing: await send(app.url, "/nope.txt"),
      badUrl: await send(app.url, "/%zz"),
      download: await send(app.url, "/__rpc/plugin/probe/report", { method: "POST", viewer, body: "{}", headers: { "content-type": "application/json" } }),
      ownObject: await send(app.url, "/own/object"),
      ownFlat: await send(app.url, "/own/flat"),
      ownReason: await send(app.url, "/own/reason"),
      ownImplicit: await send(app.url, "/own/implicit"),
      ownFlushed: await send(app.url, "/own/flushed"),
      ownCookies: await send(app.url, "/own/cookies"),
      ownPairs: await send(app.url, "/own/pairs"),
      ownNoReason: await send(app.url, "/own/no-reason"),
      ownWriteHeader: await send(app.url, "/own/write-header"),
      ownSetThenObject: await send(app.url, "/own/set-then-object"),
    };
    const stream = await openStream(app.url, "plugin/probe/words", { viewer });
    await stream.finished;
    const seen = Object.fromEntries(
      [...Object.entries(answers).map(([name, answer]) => [name, answer.headers] as const), ["stream", stream.headers] as const].map(([name, headers]) => [
        name,
        [headers["x-content-type-options"], headers["referrer-policy"]],
      ]),
    );
    const expected = Object.fromEntries(Object.keys(seen).map((name) => [name, ["nosniff", "same-origin"]]));
    expect(seen).toEqual(expected);
    // The answers themselves are what they were.
    expect([answers.proxied.status, answers.proxyRefused.status, answers.badUrl.status, answers.missing.status]).toEqual([200, 401, 400, 404]);
    expect(stream.records.at(-1)).toMatchObject({ done: true, result: { words: 3 } });
    expect([answers.download.status, answers.download.headers["content-disposition"], answers.download.body]).toEqual([200, "attachment; filename=\"report.csv\"; filename*=UTF-8''report.csv", "a,b\n1,2\n"]);
    expect([answers.ownObject.headers["content-type"], answers.ownFlat.headers["content-type"], answers.ownFlat.headers["x-extra"], answers.ownReason.status, answers.ownImplicit.headers["content-type"], answers.ownFlushed.body]).toEqual(["text/plain", "text/plain", "1", 200, "text/plain", "own"]);
    // What the route wrote itself is sent as it wrote it, whichever form it gave writeHead.
    const own = (answer: RawAnswer) => [answer.status, answer.headers["content-type"], answer.headers["set-cookie"], answer.headers["x-extra"]];
    expect([answers.ownCookies, answers.ownPairs, answers.ownNoReason, answers.ownWriteHeader, answers.ownSetThenObject].map(own)).toEqual([
      [200, "text/plain", ["a=1", "b=2"], undefined],
      [200, "text/plain", ["a=1", "b=2"], undefined],
      [200, "text/plain", undefined, "2"],
      [200, "text/plain", undefined, undefined],
      [200, "text/plain", undefined, "3"],
    ]);
    // Each once, with the request's id, however the answer was written.
    for (const [name, answer] of Object.entries(answers)) {
      const written = answer.rawHeaders.filter((_, i) => i % 2 === 0).map((header) => header.toLowerCase());
      const once = ["x-request-id", "x-content-type-options", "referrer-policy"].map((header) => written.filter((seen) => seen === header).length);
      expect([name, once, answer.headers["x-request-id"]]).toEqual([name, [1, 1, 1], expect.stringMatching(/^[0-9a-f-]{36}$/)]);
    }
  });

  it("give a server route the request's id as ctx.requestId, the one its answer carries", async () => {
    const answer = await send(app.url, "/own/id", { headers: { "x-request-id": "route-call-1" } });
    expect([answer.headers["x-request-id"], answer.json]).toEqual(["route-call-1", { requestId: "route-call-1", onResponse: null }]);
  });

  it("leave a header the answer sets itself as it set it, in whatever case", async () => {
    for (const path of ["/own/cased", "/own/set-before"]) {
      const answer = await send(app.url, path, { headers: { "x-request-id": "from-client" } });
      const written = answer.rawHeaders.filter((_, i) => i % 2 === 0).map((header) => header.toLowerCase());
      const once = ["x-request-id", "x-content-type-options", "referrer-policy"].map((header) => written.filter((seen) => seen === header).length);
      expect([path, once, answer.headers["referrer-policy"], answer.headers["x-request-id"]]).toEqual([path, [1, 1, 1], "no-referrer", "chosen-by-route"]);
    }
  });

  it("put a CSP with a fresh nonce on pages, and that nonce on every script of the page", async () => {
    const first = await page(app.url);
    const second = await page(app.url);
    for (const answer of [first, second]) {
      const nonce = /'nonce-([A-Za-z0-9+/=]+)'/.exec(answer.csp as string)?.[1];
      expect(answer.csp).toBe(`script-src 'self' 'nonce-${nonce}'; object-src 'none'; base-uri 'self'; frame-ancestors 'self'`);
      // The page's own inline and external scripts, then the bootstrap's two.
      expect(answer.nonces).toEqual([nonce, nonce, nonce, nonce]);
      expect(answer.body).toContain(`<script nonce="${nonce}">window.APP_CSRF_TOKEN = "`);
      expect(answer.headers["cache-control"]).toBe("no-store");
    }
    expect(first.nonces[0]).not.toBe(second.nonces[0]);
    // 128 bits, base64.
    expect(Buffer.from(first.nonces[0]!, "base64")).toHaveLength(16);
  });

  it('leave "<script" alone where it is not a tag: comments, script text, style and textarea', async () => {
    const { body } = await page(app.url);
    expect(body).toContain("<!-- <script>window.fromComment = true;</script> -->");
    expect(body).toContain('window.markup = "<script>not a tag<\\/script>"');
    expect(body).toContain('p::before { content: "<script>"; }');
    expect(body).toContain("<textarea id=\"text\"><script>text, not a tag</script></textarea>");
  });

  it("give the dev console a CSP that refuses every frame", async () => {
    const answer = await page(app.url, "/__app/dev");
    expect(answer.csp).toMatch(/^script-src 'self' 'nonce-[A-Za-z0-9+/=]+'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'$/);
    expect(answer.headers["x-frame-options"]).toBe("DENY");
    expect(answer.nonces.length).toBeGreaterThan(0);
  });

  it("put no CSP on anything but pages", async () => {
    for (const path of ["/big.css", "/own.js", "/__app/client.js", "/health", "/nope"]) {
      expect([path, (await send(app.url, path)).headers["content-security-policy"]]).toEqual([path, undefined]);
    }
    const answer = await rpc(app.url, "plugin/probe/hello", { viewer });
    expect(answer.headers.get("content-security-policy")).toBeNull();
  });
});

describe("server.headers", () => {
  const running: TestServer[] = [];
  const serve = async (headers: NonNullable<NonNullable<AppConfigInput["server"]>["headers"]>) => {
    const app = await startServer({ root: ROOT, config: { server: { headers } } });
    running.push(app);
    return app;
  };
  afterAll(async () => {
    await Promise.all(running.map((app) => app.close()));
  });

  it("replaces a default directive, drops one set to false, and adds others", async () => {
    const app = await serve({
      contentSecurityPolicy: {
        directives: {
          "frame-ancestors": ["'self'", "https://xopat.example"],
          "base-uri": false,
          "script-src": ["'self'", "https://cdn.example"],
          "img-src": ["'self'", "data:", "https://tiles.example"],
        },
      },
    });
    const answer = await page(app.url);
    const nonce = answer.nonces[0];
    expect(answer.csp).toBe(
      `script-src 'self' https://cdn.example 'nonce-${nonce}'; object-src 'none'; frame-ancestors 'self' https://xopat.example; img-src 'self' data: https://tiles.example`,
    );
  });

  it("reports instead of enforcing with reportOnly", async () => {
    const app = await serve({ contentSecurityPolicy: { reportOnly: true, directives: { "report-uri": ["/csp-reports"] } } });
    const answer = await page(app.url);
    expect(answer.csp).toBeUndefined();
    expect(answer.headers["content-security-policy-report-only"]).toBe(
      `script-src 'self' 'nonce-${answer.nonces[0]}'; object-src 'none'; base-uri 'self'; frame-ancestors 'self'; report-uri /csp-reports`,
    );
  });

  it("with contentSecurityPolicy false, sends no CSP and serves pages without nonces", async () => {
    const app = await serve({ contentSecurityPolicy: false });
    const answer = await page(app.url);
    expect(answer.csp).toBeUndefined();
    expect(answer.headers["content-security-policy-report-only"]).toBeUndefined();
    expect(answer.body).not.toContain("nonce=");
    expect(answer.body).toContain('<script>window.ownInline = "ran";');
    expect(answer.body).toMatch(/<script>window\.APP_CSRF_TOKEN = "[\w-]+";<\/script><script src="\/__app\/client\.js"><\/script><\/head>/);
  });

  it("adds no nonce to a script-src with 'unsafe-inline', which a nonce would switch off", async () => {
    const app = await serve({ contentSecurityPolicy: { directives: { "script-src": ["'self'", "'unsafe-inline'"] } } });
    const answer = await page(app.url);
    expect(answer.csp).toBe("script-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'self'; frame-ancestors 'self'");
    expect(answer.nonces).toEqual([]);
  });

  it("gives a nonce to scripts that follow default-src when script-src is dropped", async () => {
    const app = await serve({ contentSecurityPolicy: { directives: { "default-src": ["'self'"], "script-src": false } } });
    const answer = await page(app.url);
    expect(answer.csp).toBe(`object-src 'none'; base-uri 'self'; frame-ancestors 'self'; default-src 'self'; script-src 'self' 'nonce-${answer.nonces[0]}'`);
  });

  it("sets another Referrer-Policy, or none, and drops nosniff when told", async () => {
    const other = await serve({ referrerPolicy: "strict-origin-when-cross-origin" });
    expect((await send(other.url, "/small.txt")).headers["referrer-policy"]).toBe("strict-origin-when-cross-origin");
    const none = await serve({ referrerPolicy: false, noSniff: false });
    const answer = await send(none.url, "/small.txt");
    expect([answer.headers["referrer-policy"], answer.headers["x-content-type-options"]]).toEqual([undefined, undefined]);
  });

  it("refuses at start what would break the header or mean something else, naming the key", () => {
    const refused = (headers: unknown) => () => parseConfig({ server: { headers } } as AppConfigInput, {});
    expect(refused({ contentSecurityPolicy: { directives: { "script-src": ["'self'; img-src *"] } } })).toThrow(/server\.headers\.contentSecurityPolicy\.directives\.script-src\.0: must be one source/);
    expect(refused({ contentSecurityPolicy: { directives: { "script-src": ["https://a.example https://b.example"] } } })).toThrow(/must be one source/);
    expect(refused({ contentSecurityPolicy: { directives: { "script-src": ["self"] } } })).toThrow(/must be in single quotes/);
    expect(refused({ contentSecurityPolicy: { directives: { "script-scr": ["'self'"] } } })).toThrow(/script-scr: unknown key; did you mean "script-src"\?/);
    expect(refused({ contentSecurityPolicy: true })).toThrow(/server\.headers\.contentSecurityPolicy/);
    expect(refused({ referrerPolicy: "never" })).toThrow(/server\.headers\.referrerPolicy/);
    expect(refused({ xFrameOptions: "DENY" })).toThrow(/server\.headers\.xFrameOptions: unknown key/);
  });
});
