// docs/guides/proxy.md "Checks, in order" and "Headers": the order of checks and their codes, every method, the path rules
// with the usual traversal vectors, and which headers cross the proxy in each direction.
// (A session that expires while the proxy uses it: test/auth/session.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, send, type Viewer } from "../helpers/http.js";
import { TestUpstream } from "../helpers/upstream.js";

const ROOT = join(import.meta.dirname, "../fixtures/proxy-app");

describe("proxy forwarding", () => {
  let upstream: TestUpstream;
  let app: TestServer;
  let viewer: Viewer;
  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    app = await startServer({
      root: ROOT,
      config: {
        server: {
          secure: {
            proxies: {
              open: { baseUrl: `${upstream.origin}/base`, headers: { "X-Api-Key": "server-key", "x-static-mixed": "static" } },
              slash: { baseUrl: `${upstream.origin}/deep/base///` },
              root: { baseUrl: upstream.origin },
              "odd alias": { baseUrl: `${upstream.origin}/odd` },
              keyed: { baseUrl: `${upstream.origin}/keyed`, auth: { enabled: true, verifiers: ["header-key"] } },
            },
          },
        },
      },
    });
    viewer = await openViewer(app.url);
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  describe("checks, in order", () => {
    it("answers 401 PROXY_NO_SESSION without a valid session cookie, whatever else is wrong", async () => {
      for (const path of ["/proxy/open/x", "/proxy/nope/x", "/proxy/open/%2e%2e/x", "/proxy/keyed/x"]) {
        for (const cookie of [undefined, "app_session=v1.forged.99999999999.mac", "app_session="]) {
          const answer = await send(app.url, path, { headers: { ...(cookie ? { cookie } : {}), "x-app-csrf": viewer.csrf } });
          expect([path, answer.status, answer.json]).toEqual([path, 401, { error: expect.any(String), code: "PROXY_NO_SESSION", details: {} }]);
        }
      }
      expect(upstream.seen).toHaveLength(0);
    });

    it("answers 403 PROXY_BAD_CSRF without the right X-APP-CSRF header, before the alias", async () => {
      for (const csrf of [undefined, "", "wrong", viewer.csrf + "x"]) {
        for (const path of ["/proxy/open/x", "/proxy/nope/x"]) {
          const headers: Record<string, string> = { cookie: viewer.cookie };
          if (csrf !== undefined) headers["x-app-csrf"] = csrf;
          const answer = await send(app.url, path, { headers });
          expect([path, csrf, answer.status, answer.json?.code]).toEqual([path, csrf, 403, "PROXY_BAD_CSRF"]);
        }
      }
      // Another viewer's token does not fit this session.
      const other = await openViewer(app.url);
      const crossed = await send(app.url, "/proxy/open/x", { headers: { cookie: viewer.cookie, "x-app-csrf": other.csrf } });
      expect(crossed.json.code).toBe("PROXY_BAD_CSRF");
      expect(upstream.seen).toHaveLength(0);
    });

    it("answers 404 PROXY_UNKNOWN_ALIAS for unknown and inherited names, before the path", async () => {
      for (const alias of ["nope", "__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "", "OPEN", "open%2F", "%6Fpen%2Fx"]) {
        for (const rest of ["/x", "/%2e%2e/x", ""]) {
          const path = `/proxy/${alias}${rest}`;
          const answer = await send(app.url, path, { viewer });
          expect([path, answer.status, answer.json]).toEqual([path, 404, { error: expect.any(String), code: "PROXY_UNKNOWN_ALIAS", details: {} }]);
        }
      }
      expect((await send(app.url, "/proxy", { viewer })).json.code).toBe("PROXY_UNKNOWN_ALIAS");
      // Fastify's router refuses an undecodable URL itself, before any route runs.
      expect((await send(app.url, "/proxy/open%ZZ/x", { viewer })).status).toBe(400);
      expect(upstream.seen).toHaveLength(0);
    });

    it("decodes the alias segment", async () => {
      const answer = await send(app.url, "/proxy/odd%20alias/x", { viewer });
      expect(answer.status).toBe(200);
      expect(answer.json.url).toBe("/odd/x");
    });

    it("checks the path before the verifiers, and the verifiers before anything goes upstream", async () => {
      const badPath = await send(app.url, "/proxy/keyed/%2e%2e/x", { viewer });
      expect([badPath.status, badPath.json.code]).toEqual([400, "PROXY_BAD_PATH"]);
      const refused = await send(app.url, "/proxy/keyed/x", { viewer });
      expect([refused.status, refused.json]).toEqual([401, { error: expect.any(String), code: "PROXY_AUTH_FAILED", details: {} }]);
      expect(upstream.find("/keyed")).toHaveLength(0);
      const passed = await send(app.url, "/proxy/keyed/x", { viewer, headers: { "x-key": "open-sesame" } });
      expect(passed.status).toBe(200);
      expect(upstream.find("/keyed")).toHaveLength(1);
    });

    it("logs one event per request, without the query string", async () => {
      const answer = await send(app.url, "/proxy/open/logged?token=very-secret-value&x=1", { viewer });
      expect(answer.status).toBe(200);
      const refused = await send(app.url, "/proxy/nope/x?token=very-secret-value", { viewer });
      expect(refused.status).toBe(404);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const complete = app.logs.events("proxy.").filter((line) => line.event === "proxy.complete" && line.status === 200);
      expect(complete.length).toBeGreaterThan(0);
      expect(complete.at(-1)).toMatchObject({ alias: "open", method: "GET", status: 200, durationMs: expect.any(Number), reqId: expect.any(String) });
      const rejected = app.logs.events("proxy.").filter((line) => line.event === "proxy.rejected" && line.code === "PROXY_UNKNOWN_ALIAS");
      expect(rejected.at(-1)).toMatchObject({ status: 404, alias: null });
      for (const line of [complete.at(-1)!, rejected.at(-1)!]) {
        expect(app.logs.forRequest(line.reqId as string)).toHaveLength(1);
      }
      expect(app.logs.text()).not.toContain("very-secret-value");
      expect(app.logs.text()).not.toContain(viewer.csrf);
    });
  });

  describe("methods", () => {
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
      it(`forwards ${method} with its body and query`, async () => {
        const body = method === "GET" || method === "OPTIONS" ? undefined : `{"method":"${method}"}`;
        const answer = await send(app.url, `/proxy/open/items/7?sort=asc&tag=a&tag=b`, {
          viewer,
          method,
          body,
          headers: body ? { "content-type": "application/json" } : {},
        });
        expect(answer.status).toBe(200);
        expect(answer.json).toMatchObject({ method, url: "/base/items/7?sort=asc&tag=a&tag=b", bytes: body ? body.length : 0 });
        if (body) expect(answer.json.headers["content-type"]).toBe("application/json");
      });
    }

    it("forwards HEAD: upstream headers, no body", async () => {
      const before = upstream.seen.length;
      const answer = await send(app.url, "/proxy/open/head-me", { viewer, method: "HEAD" });
      expect(answer.status).toBe(200);
      expect(answer.body).toBe("");
      expect(answer.headers["x-upstream"]).toBe("echo");
      expect(Number(answer.headers["content-length"])).toBeGreaterThan(0);
      expect(upstream.seen.slice(before).map((entry) => entry.method)).toEqual(["HEAD"]);
    });

    it("forwards a body sent without a content type, and one sent chunked", async () => {
      const plain = await send(app.url, "/proxy/open/raw", { viewer, method: "POST", body: "no content type" });
      expect(plain.json).toMatchObject({ bytes: 15 });
      expect(plain.json.headers["content-type"]).toBeUndefined();
      const chunked = await send(app.url, "/proxy/open/chunked", { viewer, method: "PUT", headers: { "transfer-encoding": "chunked" }, body: "chunked body" });
      expect(chunked.json).toMatchObject({ method: "PUT", bytes: 12 });
    });

    it("answers other verbs 405 PROXY_METHOD_NOT_ALLOWED with Allow, before the session check", async () => {
      // (Fastify itself refuses a QUERY without a content type, with 400.)
      for (const method of ["TRACE", "QUERY"]) {
        const answer = await send(app.url, "/proxy/open/x", { method, headers: { "content-type": "text/plain" } });
        expect([method, answer.status, answer.json]).toEqual([method, 405, { error: expect.any(String), code: "PROXY_METHOD_NOT_ALLOWED", details: {} }]);
        expect(answer.headers.allow).toBe("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
      }
      expect(upstream.find("/base/x")).toHaveLength(0);
    });
  });

  describe("paths", () => {
    const traversals = [
      "..",
      ".",
      "../../etc/passwd",
      "a/../../b",
      "a/./b",
      "%2e%2e",
      "%2E%2E/x",
      ".%2e",
      "%2e.",
      "%2e",
      "%252e%252e",
      "%25252e%25252e/x",
      "a%2fb",
      "a%2Fb",
      "..%2f..%2fetc",
      "%252f",
      "a%5cb",
      "..%5c..%5cx",
      "%255c",
      "a\\b",
      "..\\x",
      "..;",
      "..;/x",
      "..;jsessionid=1/x",
      "%2e%2e;/x",
      "%00",
      "a%00b",
      "%2500",
      "..%20",
    ];
    for (const vector of traversals) {
      it(`refuses ${JSON.stringify(vector)} with 400 PROXY_BAD_PATH`, async () => {
        const path = `/proxy/open/${vector}`;
        const answer = await send(app.url, path, { viewer });
        expect([path, answer.status, answer.json?.code]).toEqual([path, 400, "PROXY_BAD_PATH"]);
      });
    }

    // Not valid percent-encoded UTF-8: Fastify's router answers 400 before the proxy runs.
    for (const vector of ["%c0%ae%c0%ae/x", "%c0%af", "%zz%2f", "%e0%80%ae"]) {
      it(`refuses ${JSON.stringify(vector)} with 400`, async () => {
        const answer = await send(app.url, `/proxy/open/${vector}`, { viewer });
        expect(answer.status).toBe(400);
      });
    }

    it("sent none of those upstream", () => {
      expect(upstream.seen.filter((entry) => entry.url.includes("..") || /%2e|%2f|%5c|%00|\\/i.test(entry.url))).toEqual([]);
    });

    it("keeps a path that only looks odd, with the client's own encoding", async () => {
      const cases: Array<[string, string]> = [
        ["/proxy/open/a%20b/c%3Fd?q=%26x&e=%3D", "/base/a%20b/c%3Fd?q=%26x&e=%3D"],
        ["/proxy/open/..foo/...x/.hidden", "/base/..foo/...x/.hidden"],
        ["/proxy/open/%2e%2efoo/a;b=c", "/base/%2e%2efoo/a;b=c"],
        ["/proxy/open/100%25/50%25off", "/base/100%25/50%25off"],
        ["/proxy/open/caf%C3%A9", "/base/caf%C3%A9"],
        ["/proxy/open/", "/base/"],
        ["/proxy/open", "/base/"],
        ["/proxy/open?only=query", "/base/?only=query"],
        ["/proxy/slash/x", "/deep/base/x"],
        ["/proxy/root/x/y", "/x/y"],
        ["/proxy/root", "/"],
      ];
      for (const [path, expected] of cases) {
        const answer = await send(app.url, path, { viewer });
        expect([path, answer.status, answer.json?.url]).toEqual([path, 200, expected]);
      }
    });

    it("keeps //evil.example/x on the upstream's origin", async () => {
      for (const path of ["/proxy/open//evil.example/x", "/proxy/root//evil.example/x", "/proxy/root///evil.example/x"]) {
        const answer = await send(app.url, path, { viewer });
        expect(answer.status).toBe(200);
        expect(answer.json.url).toMatch(/^\/(base\/)?\/+evil\.example\/x$/);
        expect(answer.json.headers.host).toBe(`127.0.0.1:${upstream.port}`);
      }
    });
  });

  describe("headers upstream", () => {
    it("drops hop-by-hop headers, those named in Connection, Host, Cookie and X-APP-CSRF; adds X-Forwarded-*", async () => {
      const answer = await send(app.url, "/proxy/open/headers", {
        viewer,
        method: "POST",
        body: "x",
        headers: {
          connection: "keep-alive, X-Listed-By-Client",
          "x-listed-by-client": "hop",
          "keep-alive": "timeout=9",
          "proxy-authorization": "Basic c2VjcmV0",
          "proxy-connection": "keep-alive",
          "proxy-anything": "1",
          te: "trailers",
          trailer: "x-trailer",
          "transfer-encoding": "chunked",
          upgrade: "websocket",
          "x-forwarded-for": "6.6.6.6",
          "x-forwarded-host": "spoofed.example",
          "x-forwarded-proto": "https",
          "x-kept": "kept",
          authorization: "Bearer not-checked-here",
          forwarded: "for=1.2.3.4;proto=https",
          "x-real-ip": "1.2.3.4",
          "x-original-url": "/admin/delete-all",
          "x-rewrite-url": "/admin",
          "x-forwarded-prefix": "/evil",
        },
      });
      expect(answer.status).toBe(200);
      const seen = answer.json.headers;
      for (const name of ["x-listed-by-client", "keep-alive", "proxy-authorization", "proxy-connection", "proxy-anything", "te", "trailer", "upgrade", "cookie", "x-app-csrf", "forwarded", "x-real-ip", "x-original-url", "x-rewrite-url", "x-forwarded-prefix"]) {
        expect([name, seen[name]]).toEqual([name, undefined]);
      }
      expect(seen.connection).not.toMatch(/x-listed/i);
      expect(seen.host).toBe(`127.0.0.1:${upstream.port}`);
      expect(seen["x-forwarded-for"]).toBe("127.0.0.1");
      expect(seen["x-forwarded-proto"]).toBe("http");
      expect(seen["x-forwarded-host"]).toBe(new URL(app.url).host);
      expect(seen["x-kept"]).toBe("kept");
      // Auth is off for this alias: the client's Authorization goes through untouched.
      expect(seen.authorization).toBe("Bearer not-checked-here");
    });

    it("lets static headers win over a client header of the same name, whatever its case", async () => {
      const answer = await send(app.url, "/proxy/open/static", {
        viewer,
        headers: { "X-API-KEY": "client-key", "X-Static-Mixed": "client" },
      });
      const raw: string[] = answer.json.rawHeaders;
      const values = (name: string) => pairs(raw, name);
      expect(values("x-api-key")).toEqual(["server-key"]);
      expect(values("x-static-mixed")).toEqual(["static"]);
    });

    it("passes verifier header changes upstream, and static headers still win over them", async () => {
      const answer = await send(app.url, "/proxy/keyed/changes", { viewer, headers: { "x-key": "open-sesame", "x-remove-me": "1" } });
      expect(answer.status).toBe(200);
      expect(answer.json.headers["x-verified"]).toBe("header-key");
      expect(answer.json.headers["x-remove-me"]).toBeUndefined();
      // keyed has no static x-api-key: the verifier's value arrives.
      expect(answer.json.headers["x-api-key"]).toBe("from-verifier");
    });
  });

  describe("headers back", () => {
    it("returns the upstream status and headers minus hop-by-hop ones and Set-Cookie", async () => {
      const answer = await send(app.url, "/proxy/open/answer", { viewer });
      expect(answer.status).toBe(200);
      expect(answer.headers["x-upstream"]).toBe("echo");
      expect(answer.headers["content-type"]).toBe("application/json");
      for (const name of ["set-cookie", "x-listed-by-upstream", "proxy-authenticate", "proxy-x", "trailer", "upgrade"]) {
        expect([name, answer.headers[name]]).toEqual([name, undefined]);
      }
      expect(answer.headers["keep-alive"]).not.toBe("timeout=5");
    });

    it("drops a Trailer header and still passes a chunked answer through", async () => {
      upstream.routes.set("/chunked-answer", (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain", trailer: "x-checksum", "x-from": "upstream" });
        res.write("part one, ");
        res.addTrailers({ "x-checksum": "abc" });
        res.end("part two");
      });
      const answer = await send(app.url, "/proxy/open/chunked-answer", { viewer });
      expect(answer.status).toBe(200);
      expect(answer.body).toBe("part one, part two");
      expect(answer.headers["x-from"]).toBe("upstream");
      expect(answer.headers.trailer).toBeUndefined();
    });

    it("passes upstream error statuses through as they are", async () => {
      upstream.routes.set("/status-", (req, res) => {
        const status = Number(req.url!.split("status-")[1]);
        res.writeHead(status, { "content-type": "text/plain", "x-from": "upstream" });
        res.end(`status ${status}`);
      });
      for (const status of [201, 204, 301, 404, 418, 500, 503]) {
        const answer = await send(app.url, `/proxy/open/status-${status}`, { viewer });
        expect([status, answer.status, answer.headers["x-from"]]).toEqual([status, status, "upstream"]);
        if (status !== 204) expect(answer.body).toBe(`status ${status}`);
      }
    });
  });
});

describe("proxy behind a trusted reverse proxy", () => {
  it("appends the client address to X-Forwarded-For and keeps the forwarded host and proto", async () => {
    const upstream = await new TestUpstream().start();
    const app = await startServer({
      root: ROOT,
      config: { server: { trustProxy: true, secure: { proxies: { open: { baseUrl: upstream.origin } } } } },
    });
    try {
      const viewer = await openViewer(app.url);
      const answer = await send(app.url, "/proxy/open/x", {
        viewer,
        headers: { "x-forwarded-for": "203.0.113.7", "x-forwarded-proto": "https", "x-forwarded-host": "app.example" },
      });
      expect(answer.json.headers["x-forwarded-for"]).toBe("203.0.113.7, 127.0.0.1");
      expect(answer.json.headers["x-forwarded-proto"]).toBe("https");
      expect(answer.json.headers["x-forwarded-host"]).toBe("app.example");
    } finally {
      await app.close();
      await upstream.close();
    }
  });
});

/** Every value of `name` (any case) in a raw header list. */
function pairs(raw: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) out.push(raw[i + 1]!);
  return out;
}
