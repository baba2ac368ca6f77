// docs/guides/server-methods.md "Server methods": one APP_SERVER per process, shared by every server in it.
// Verifiers registered through it reach the server whose boot hooks run, isDevMode(ctx)
// answers for the call's server, and servers with different outbound settings are refused.
import { afterEach, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, rpc } from "../helpers/http.js";
import { tempApp } from "../helpers/app-root.js";

/** An app root whose boot hook registers `verifierName` through the global APP_SERVER (slowly, so two boots overlap). */
function appRoot(verifierName: string): string {
  return tempApp({
    files: {
      "plugins/p/register.server.mjs": `export async function register() {
        await new Promise((resolve) => setTimeout(resolve, 50));
        APP_SERVER.registerRpcAuthVerifier(${JSON.stringify(verifierName)}, () => true);
      }`,
      "plugins/p/p.server.mjs": `export function dev(ctx) { return APP_SERVER.isDevMode(ctx); }
       export function late() { APP_SERVER.registerRpcAuthVerifier("late", () => true); }`,
    },
  });
}

describe("APP_SERVER shared by several servers in one process", () => {
  const open: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((server) => server.close()));
  });

  it("sends each boot hook's registrations to its own server, even when two servers start at once", async () => {
    const [a, b] = await Promise.all([startServer({ root: appRoot("only-a") }), startServer({ root: appRoot("only-b") })]);
    open.push(a, b);
    expect([a.server.core.rpcVerifiers.has("only-a"), a.server.core.rpcVerifiers.has("only-b")]).toEqual([true, false]);
    expect([b.server.core.rpcVerifiers.has("only-b"), b.server.core.rpcVerifiers.has("only-a")]).toEqual([true, false]);
  });

  it("answers isDevMode(ctx) for the call's own server", async () => {
    const [dev, plain] = await Promise.all([startServer({ root: appRoot("v1"), dev: true }), startServer({ root: appRoot("v2") })]);
    open.push(dev, plain);
    const call = async (server: TestServer) => (await rpc(server.url, "plugin/p/dev", { viewer: await openViewer(server.url) })).body.result;
    expect(await call(dev)).toBe(true);
    expect(await call(plain)).toBe(false);
  });

  it("refuses a running server's registration made while another server boots, which keeps its own verifiers", async () => {
    const running = await startServer({ root: appRoot("v8"), dev: true });
    open.push(running);
    const viewer = await openViewer(running.url);
    // The second server's boot hook waits 50 ms: the running server's call lands inside it.
    const booting = startServer({ root: appRoot("v9") });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const answer = await rpc(running.url, "plugin/p/late", { viewer });
    const second = await booting;
    open.push(second);
    expect(answer.status).toBe(500);
    expect(answer.body.error).toMatch(/only while boot hooks run/);
    expect([second.server.core.rpcVerifiers.has("v9"), second.server.core.rpcVerifiers.has("late")]).toEqual([true, false]);
  });

  it("refuses to register a verifier outside a boot: the error says where it belongs", async () => {
    const server = await startServer({ root: appRoot("v3"), dev: true });
    open.push(server);
    const answer = await rpc(server.url, "plugin/p/late", { viewer: await openViewer(server.url) });
    expect(answer.status).toBe(500);
    expect(answer.body.error).toMatch(/only while boot hooks run/);
  });

  it("refuses a second server whose outbound settings differ, and takes it once the first has closed", async () => {
    const first = await startServer({ root: appRoot("v4"), config: { server: { outbound: { allow: ["a.example"] } } } });
    const second = startServer({ root: appRoot("v5"), config: { server: { outbound: { allow: ["b.example"] } } } });
    await expect(second).rejects.toMatchObject({ name: "StartupError", message: expect.stringMatching(/different server\.outbound settings/) });
    // The same settings are fine side by side.
    const same = await startServer({ root: appRoot("v6"), config: { server: { outbound: { allow: ["a.example"] } } } });
    await same.close();
    await first.close();
    const later = await startServer({ root: appRoot("v7"), config: { server: { outbound: { allow: ["b.example"] } } } });
    open.push(later);
    expect(later.url).toMatch(/^http:/);
  });

  // Last: a boot that never settles leaves its server a member of APP_SERVER for good.
  it("starts a server while another one's boot hook never settles", async () => {
    const hung = tempApp({ files: { "plugins/h/register.server.mjs": "export function register() { return new Promise(() => {}); }" } });
    void startServer({ root: hung }).catch(() => undefined);
    const other = await startServer({ root: appRoot("v10") });
    open.push(other);
    expect(other.server.core.rpcVerifiers.has("v10")).toBe(true);
  });
});
