// docs/guides/server-methods.md "Exposing a method: authentication": the viewer session — one signed cookie
// (HttpOnly, SameSite=Lax, Path=/, Secure on https behind a trusted proxy) that any process
// with the same APP_SESSION_SECRET accepts; a forged or expired one refused; the CSRF token
// bound to its own session. (Which methods need a session: test/rpc/decision-matrix.test.ts.)
import { afterAll, describe, expect, it } from "vitest";
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { TEST_SESSION_SECRET, startServer, useServer } from "../helpers/server.js";
import { openViewer, rpc, send, type Viewer } from "../helpers/http.js";
import { expectStartupFailure, startEntrypoint, type RunningProcess } from "../helpers/process.js";
import { TestUpstream } from "../helpers/upstream.js";
import { tempApp } from "../helpers/app-root.js";

const ROOT = join(import.meta.dirname, "../fixtures/gateway-app");
const PROXY_ROOT = join(import.meta.dirname, "../fixtures/proxy-app");

/** A session as the server signs one (`v1.<id>.<expiresAtSec>.<mac>`), with that session's CSRF token. */
function signedSession(id: string, expiresAtSec: number, secret = TEST_SESSION_SECRET): Viewer {
  const mac = (data: string) => createHmac("sha256", secret).update(data).digest("base64url");
  const token = `v1.${id}.${expiresAtSec}`;
  return { cookie: `app_session=${token}.${mac(`session:${token}`)}`, csrf: mac(`csrf:${id}`) };
}

const nowSec = () => Math.floor(Date.now() / 1000);

const running: RunningProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((run) => run.stop("SIGKILL")));
});

describe("the session cookie", () => {
  const app = useServer({ root: ROOT });

  const sessionOnly = (viewer: Viewer) => rpc(app.url, "plugin/matrix/sessionOnly", { viewer });

  it("comes with the viewer page: HttpOnly, SameSite=Lax, Path=/, not Secure over plain http", async () => {
    const cookie = (await fetch(app.url + "/")).headers.get("set-cookie")!;
    expect(cookie).toMatch(/^app_session=v1\.[\w-]+\.\d+\.[\w-]+;/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).not.toMatch(/Secure/i);
  });

  it("is kept while valid: a second page load issues no new cookie and the same CSRF token", async () => {
    const viewer = await openViewer(app.url);
    const second = await fetch(app.url + "/sub/page.html", { headers: { cookie: viewer.cookie } });
    expect(second.headers.get("set-cookie")).toBeNull();
    expect(await second.text()).toContain(`window.APP_CSRF_TOKEN = "${viewer.csrf}"`);
  });

  it("is Secure only when the request is https behind a trusted proxy", async () => {
    const trusted = await startServer({ root: ROOT, config: { server: { trustProxy: true } } });
    try {
      const secure = await fetch(trusted.url + "/", { headers: { "x-forwarded-proto": "https" } });
      expect(secure.headers.get("set-cookie")).toMatch(/Secure/);
      const untrusted = await fetch(app.url + "/", { headers: { "x-forwarded-proto": "https" } });
      expect(untrusted.headers.get("set-cookie")).not.toMatch(/Secure/);
    } finally {
      await trusted.close();
    }
  });

  it("is refused when forged: signed with another secret, its expiry or id changed, or of another shape", async () => {
    const genuine = signedSession("hand-made-session-id-01", nowSec() + 600);
    const accepted = await sessionOnly(genuine);
    expect([accepted.status, accepted.body.result?.session]).toEqual([200, "hand-made-session-id-01"]);
    const [token, mac] = [genuine.cookie.slice(0, genuine.cookie.lastIndexOf(".")), genuine.cookie.slice(genuine.cookie.lastIndexOf(".") + 1)];
    const forgeries: Viewer[] = [
      signedSession("hand-made-session-id-01", nowSec() + 600, "another-session-secret-of-32-bytes-long"),
      { ...genuine, cookie: `${token.replace(/\.(\d+)$/, (_all, exp: string) => `.${Number(exp) + 3600}`)}.${mac}` },
      { ...genuine, cookie: genuine.cookie.replace("hand-made-session-id-01", "hand-made-session-id-02") },
      { ...genuine, cookie: genuine.cookie.replace("app_session=v1.", "app_session=v2.") },
      { ...genuine, cookie: `${token}.` },
    ];
    for (const forged of forgeries) {
      const answer = await sessionOnly(forged);
      expect([forged.cookie, answer.status, answer.body.code]).toEqual([forged.cookie, 401, "RPC_NO_SESSION"]);
    }
  });

  it("is refused once expired, and the viewer page then issues a new one", async () => {
    const expired = signedSession("expired-session-id-0001", nowSec() - 1);
    const answer = await sessionOnly(expired);
    expect([answer.status, answer.body.code]).toEqual([401, "RPC_NO_SESSION"]);
    const page = await fetch(app.url + "/", { headers: { cookie: expired.cookie } });
    expect(page.headers.get("set-cookie")).toMatch(/^app_session=/);
    expect(page.headers.get("set-cookie")).not.toContain(expired.cookie);
  });

  it("binds the CSRF token to its own session: another session's token is refused", async () => {
    const [first, second] = await Promise.all([openViewer(app.url), openViewer(app.url)]);
    expect(first.csrf).not.toBe(second.csrf);
    const crossed = await sessionOnly({ cookie: first.cookie, csrf: second.csrf });
    expect([crossed.status, crossed.body.code]).toEqual([403, "RPC_BAD_CSRF"]);
    expect((await sessionOnly(first)).status).toBe(200);
  });
});

describe("a session that expires while in use", () => {
  it("refuses a session that expires after the proxy has already accepted it", async () => {
    const upstream = await new TestUpstream().start();
    const app = await startServer({ root: PROXY_ROOT, config: { server: { session: { ttlSec: 1 }, secure: { proxies: { open: { baseUrl: upstream.origin } } } } } });
    try {
      const viewer = await openViewer(app.url);
      expect((await send(app.url, "/proxy/open/x", { viewer })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const expired = await send(app.url, "/proxy/open/x", { viewer });
      expect([expired.status, expired.json.code]).toEqual([401, "PROXY_NO_SESSION"]);
    } finally {
      await app.close();
      await upstream.close();
    }
  });
});

describe("the session secret", () => {
  it("a session issued by one process is accepted by a second one with the same secret, not by one with another", async () => {
    const first = await startEntrypoint(["--port", "0", "--root", ROOT], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
    const second = await startEntrypoint(["--port", "0", "--root", ROOT], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
    const other = await startEntrypoint(["--port", "0", "--root", ROOT], { APP_SESSION_SECRET: "a-completely-different-secret-of-32-bytes" });
    running.push(first, second, other);

    const viewer = await openViewer(first.url);
    const call = (url: string) => rpc(url, "plugin/matrix/sessionOnly", { viewer, body: {} });
    const accepted = await call(second.url);
    expect(accepted.status).toBe(200);
    const refused = await call(other.url);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe("RPC_NO_SESSION");
  });

  it("is made up at start, with a warning, when APP_SESSION_SECRET is unset", async () => {
    const run = await startEntrypoint(["--port", "0", "--root", tempApp()]);
    running.push(run);
    expect(run.stdout()).toContain("APP_SESSION_SECRET is not set");
    await run.stop();
  });

  it("must be at least 32 bytes: a shorter one ends the start with one clear line", async () => {
    await expectStartupFailure(/APP_SESSION_SECRET must be at least 32 bytes/, ["--root", tempApp()], { APP_SESSION_SECRET: "short" });
  });
});
