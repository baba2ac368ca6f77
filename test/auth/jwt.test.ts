// docs/guides/proxy.md "The `jwt` verifier" and "The same verifier for RPC": the built-in
// `jwt` verifier for the proxy and for RPC contexts, token by token.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPairSync, createSign } from "node:crypto";
import { join } from "node:path";
import { SignJWT } from "jose";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, rpc, send, type Viewer } from "../helpers/http.js";
import { TestUpstream } from "../helpers/upstream.js";
import { b64url, hs, nowSec } from "../helpers/jwt.js";

const ROOT = join(import.meta.dirname, "../fixtures/proxy-app");
const SECRET = "proxy-test-jwt-secret-with-32-bytes!!";
const OTHER_SECRET = "another-jwt-secret-also-32-bytes-long!";
const RPC_SECRET = "rpc-context-jwt-secret-of-32-bytes-ok";
const HEADER = { alg: "HS256", typ: "JWT" };

function claims(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { sub: "user-7", iss: "https://issuer.test", aud: "proxy-api", exp: nowSec() + 300, ...extra };
}

const token = (payload: unknown = claims(), header: unknown = HEADER, secret = SECRET) => hs("sha256", secret, header, payload);

describe("jwt verifier on the proxy", () => {
  let upstream: TestUpstream;
  let app: TestServer;
  let viewer: Viewer;
  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    const proxy = (path: string, auth: Record<string, unknown> = {}) => ({
      baseUrl: `${upstream.origin}/${path}`,
      auth: { enabled: true, verifiers: ["jwt"], ...auth },
    });
    app = await startServer({
      root: ROOT,
      env: { PROXY_OTHER_SECRET: OTHER_SECRET },
      config: {
        server: {
          auth: { jwt: { secret: SECRET, issuer: "https://issuer.test", audience: "proxy-api", userClaimHeader: "X-User" } },
          secure: {
            proxies: {
              secure: proxy("secure"),
              forwarding: proxy("forwarding", { jwt: { forward: true } }),
              skewed: proxy("skewed", { jwt: { clockSkewSec: 60 } }),
              otherkey: proxy("otherkey", { jwt: { secretEnv: "PROXY_OTHER_SECRET", issuer: "other-issuer" } }),
              seeuser: proxy("seeuser", { verifiers: ["jwt", "see-user"] }),
              either: proxy("either", { mode: "any", verifiers: ["jwt", "header-key"] }),
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

  const call = (alias: string, bearer: string | null, headers: Record<string, string> = {}) =>
    send(app.url, `/proxy/${alias}/resource`, { viewer, headers: { ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }), ...headers } });

  async function expectRefused(alias: string, bearer: string | null, reasonCode?: string) {
    const before = upstream.seen.length;
    const answer = await call(alias, bearer);
    expect([answer.status, answer.json]).toEqual([401, { error: "Unauthorized", code: "PROXY_AUTH_FAILED", details: {} }]);
    expect(upstream.seen.length).toBe(before);
    if (reasonCode) {
      const refusals = app.logs.lines.filter((line) => line.msg === "proxy verifier refused the request");
      expect(refusals.at(-1)).toMatchObject({ level: 30, verifier: "jwt", reasonCode });
    }
  }

  it("passes a valid HS256 token: sub in the claim header, Authorization removed", async () => {
    const answer = await call("secure", token());
    expect(answer.status).toBe(200);
    expect(answer.json.headers["x-user"]).toBe("user-7");
    expect(answer.json.headers.authorization).toBeUndefined();
  });

  it("accepts the Bearer scheme in any case", async () => {
    const answer = await send(app.url, "/proxy/secure/x", { viewer, headers: { authorization: `bearer ${token()}` } });
    expect(answer.status).toBe(200);
  });

  it("refuses a request without a token, or with another scheme", async () => {
    await expectRefused("secure", null, "JWT_MISSING");
    const basic = await send(app.url, "/proxy/secure/x", { viewer, headers: { authorization: "Basic dXNlcjpwYXNz" } });
    expect(basic.status).toBe(401);
  });

  describe("algorithms", () => {
    for (const alg of ["none", "None", "NONE", "nOnE"]) {
      it(`refuses alg ${alg}`, async () => {
        await expectRefused("secure", `${b64url({ alg, typ: "JWT" })}.${b64url(claims())}.`, "JWT_ALGORITHM");
        // Not even with a valid HS256 signature appended.
        await expectRefused("secure", token(claims(), { alg, typ: "JWT" }));
      });
    }

    it("refuses HS384 and HS512 signed with the right secret", async () => {
      await expectRefused("secure", hs("sha384", SECRET, { alg: "HS384", typ: "JWT" }, claims()), "JWT_ALGORITHM");
      await expectRefused("secure", hs("sha512", SECRET, { alg: "HS512", typ: "JWT" }, claims()), "JWT_ALGORITHM");
    });

    it("refuses RS256, and the public key used as an HMAC secret", async () => {
      const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
      const data = `${b64url({ alg: "RS256", typ: "JWT" })}.${b64url(claims())}`;
      const signature = createSign("RSA-SHA256").update(data).sign(privateKey).toString("base64url");
      await expectRefused("secure", `${data}.${signature}`, "JWT_ALGORITHM");
      const pem = publicKey.export({ type: "spki", format: "pem" }).toString();
      await expectRefused("secure", hs("sha256", pem, { alg: "RS256", typ: "JWT" }, claims()), "JWT_ALGORITHM");
    });

    it("refuses a token without alg", async () => {
      await expectRefused("secure", token(claims(), { typ: "JWT" }), "JWT_MALFORMED");
    });
  });

  describe("typ", () => {
    it("refuses a token without typ", async () => {
      await expectRefused("secure", token(claims(), { alg: "HS256" }), "JWT_TYPE");
    });
    it("refuses typ JWS", async () => {
      await expectRefused("secure", token(claims(), { alg: "HS256", typ: "JWS" }), "JWT_TYPE");
    });
  });

  describe("signature", () => {
    it("refuses a token signed with another secret", async () => {
      await expectRefused("secure", token(claims(), HEADER, OTHER_SECRET), "JWT_SIGNATURE");
    });
    it("refuses a truncated signature, and none at all", async () => {
      const good = token();
      await expectRefused("secure", good.slice(0, -4), "JWT_SIGNATURE");
      await expectRefused("secure", good.slice(0, good.lastIndexOf(".") + 1));
    });
    it("refuses a payload changed after signing", async () => {
      const [head, , signature] = token().split(".");
      await expectRefused("secure", `${head}.${b64url(claims({ sub: "admin" }))}.${signature}`, "JWT_SIGNATURE");
    });
  });

  describe("time claims", () => {
    it("refuses an expired token", async () => {
      await expectRefused("secure", token(claims({ exp: nowSec() - 10 })), "JWT_EXPIRED");
    });
    it("accepts a token expired within clockSkewSec, but not beyond it", async () => {
      expect((await call("skewed", token(claims({ exp: nowSec() - 10 })))).status).toBe(200);
      await expectRefused("skewed", token(claims({ exp: nowSec() - 120 })), "JWT_EXPIRED");
    });
    it("refuses a token whose nbf is in the future; skew applies to nbf too", async () => {
      await expectRefused("secure", token(claims({ nbf: nowSec() + 120 })), "JWT_NOT_YET_VALID");
      expect((await call("skewed", token(claims({ nbf: nowSec() + 30 })))).status).toBe(200);
      expect((await call("secure", token(claims({ nbf: nowSec() - 5 })))).status).toBe(200);
    });
    it("refuses a token without exp", async () => {
      const { exp: _exp, ...rest } = claims();
      await expectRefused("secure", token(rest), "JWT_CLAIM");
    });
  });

  describe("issuer and audience", () => {
    it("refuses a wrong or missing iss", async () => {
      await expectRefused("secure", token(claims({ iss: "https://evil.test" })), "JWT_CLAIM");
      const { iss: _iss, ...rest } = claims();
      await expectRefused("secure", token(rest), "JWT_CLAIM");
    });
    it("refuses a wrong or missing aud", async () => {
      await expectRefused("secure", token(claims({ aud: "other-api" })), "JWT_CLAIM");
      await expectRefused("secure", token(claims({ aud: ["other-api", "third"] })), "JWT_CLAIM");
      const { aud: _aud, ...rest } = claims();
      await expectRefused("secure", token(rest), "JWT_CLAIM");
    });
    it("accepts an aud array that contains the expected audience", async () => {
      expect((await call("secure", token(claims({ aud: ["other-api", "proxy-api"] })))).status).toBe(200);
    });
  });

  describe("malformed tokens", () => {
    for (const [name, bad] of [
      ["two segments", () => token().split(".").slice(0, 2).join(".")],
      ["four segments", () => `${token()}.extra`],
      ["one segment", () => "justonesegment"],
      ["garbage base64", () => "###.$$$.%%%"],
      ["a header that is not JSON", () => `${b64url("not json")}.${b64url(claims())}.sig`],
    ] as Array<[string, () => string]>) {
      it(`refuses ${name}`, async () => {
        await expectRefused("secure", bad());
      });
    }

    it("refuses a validly signed payload that is not an object", async () => {
      for (const payload of [JSON.stringify([1, 2, 3]), JSON.stringify("just a string"), "42", "null"]) {
        await expectRefused("secure", hs("sha256", SECRET, HEADER, payload), "JWT_MALFORMED");
      }
    });
  });

  describe("after success", () => {
    it("forwards Authorization only when forward is true", async () => {
      const bearer = token();
      const forwarded = await call("forwarding", bearer);
      expect(forwarded.json.headers.authorization).toBe(`Bearer ${bearer}`);
      const stripped = await call("secure", bearer);
      expect(stripped.json.headers.authorization).toBeUndefined();
    });

    it("never lets the client set the user claim header itself", async () => {
      const { sub: _sub, ...withoutSub } = claims();
      const answer = await call("secure", token(withoutSub), { "x-user": "admin" });
      expect(answer.status).toBe(200);
      expect(answer.json.headers["x-user"]).toBeUndefined();
      const spoofed = await call("secure", token(), { "X-User": "admin" });
      expect(spoofed.json.headers["x-user"]).toBe("user-7");
    });

    it("puts the claims in req.user for the verifiers that follow", async () => {
      const answer = await call("seeuser", token(claims({ role: "reader" })));
      expect(JSON.parse(answer.json.headers["x-seen-user"])).toMatchObject({ sub: "user-7", role: "reader", aud: "proxy-api" });
    });

    it("merges per-proxy settings key by key: secretEnv and issuer overridden, audience inherited", async () => {
      const good = hs("sha256", OTHER_SECRET, HEADER, claims({ iss: "other-issuer" }));
      expect((await call("otherkey", good)).status).toBe(200);
      await expectRefused("otherkey", token(claims({ iss: "other-issuer" })), "JWT_SIGNATURE");
      await expectRefused("otherkey", hs("sha256", OTHER_SECRET, HEADER, claims({ iss: "other-issuer", aud: "x" })), "JWT_CLAIM");
    });

    it("in any mode, passes on another verifier when the token fails", async () => {
      expect((await call("either", "not-a-token", { "x-key": "open-sesame" })).status).toBe(200);
      expect((await call("either", token())).status).toBe(200);
      await expectRefused("either", "not-a-token");
    });

    it("works with tokens from a real JWT library", async () => {
      const jwt = await new SignJWT({ scope: "read" })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setSubject("lib-user")
        .setIssuer("https://issuer.test")
        .setAudience("proxy-api")
        .setExpirationTime("2m")
        .sign(new TextEncoder().encode(SECRET));
      const answer = await call("secure", jwt);
      expect(answer.json.headers["x-user"]).toBe("lib-user");
    });
  });

  it("logs why a token failed at info level, and tells the client nothing", async () => {
    const answer = await call("secure", token(claims({ exp: nowSec() - 100 })));
    expect(answer.body).not.toMatch(/exp|expired/i);
    const line = app.logs.lines.filter((entry) => entry.msg === "proxy verifier refused the request").at(-1)!;
    expect(line).toMatchObject({ level: 30, alias: "secure", verifier: "jwt", reasonCode: "JWT_EXPIRED", reqId: expect.any(String) });
    expect(app.logs.text()).not.toContain(SECRET);
  });
});

describe("jwt verifier on RPC", () => {
  let app: TestServer;
  beforeAll(async () => {
    app = await startServer({
      root: ROOT,
      env: { RPC_JWT_SECRET: RPC_SECRET },
      config: {
        server: {
          auth: { jwt: { secret: SECRET, issuer: "https://issuer.test" } },
          secure: {
            rpcVerifiers: {
              default: {},
              api: { verifiers: { jwt: { secretEnv: "RPC_JWT_SECRET", audience: "rpc-api" } } },
              global: { verifiers: { jwt: {} } },
            },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await app.close();
  });

  const whoami = (contextId: string, bearer: string | null) =>
    rpc(app.url, "plugin/gatekeeper/whoami", {
      body: { args: [], contextId },
      headers: bearer === null ? {} : { authorization: `Bearer ${bearer}` },
    });

  it("sets ctx.user to the claims of a valid token, without a session", async () => {
    const bearer = hs("sha256", RPC_SECRET, HEADER, claims({ aud: "rpc-api", role: "admin" }));
    const answer = await whoami("api", bearer);
    expect(answer.status).toBe(200);
    expect(answer.body.result).toMatchObject({ user: { sub: "user-7", role: "admin", aud: "rpc-api", iss: "https://issuer.test" }, contextId: "api", session: null });
  });

  it("takes the context's secretEnv over the global secret, and the global settings otherwise", async () => {
    const globalSigned = hs("sha256", SECRET, HEADER, claims({ aud: "rpc-api" }));
    expect((await whoami("api", globalSigned)).body.code).toBe("RPC_AUTH_FAILED");
    expect((await whoami("global", globalSigned)).status).toBe(200);
    const wrongIssuer = hs("sha256", SECRET, HEADER, claims({ iss: "x" }));
    expect((await whoami("global", wrongIssuer)).body.code).toBe("RPC_AUTH_FAILED");
  });

  it("answers 401 RPC_AUTH_FAILED for a missing, expired, or alg-none token", async () => {
    for (const bearer of [
      null,
      hs("sha256", RPC_SECRET, HEADER, claims({ aud: "rpc-api", exp: nowSec() - 5 })),
      `${b64url({ alg: "none", typ: "JWT" })}.${b64url(claims({ aud: "rpc-api" }))}.`,
      hs("sha256", RPC_SECRET, HEADER, claims({ aud: "other" })),
    ]) {
      const answer = await whoami("api", bearer);
      expect([answer.status, answer.body]).toEqual([401, { error: expect.any(String), code: "RPC_AUTH_FAILED", details: {} }]);
    }
  });
});
