/**
 * Session data is loaded only for methods that can read it (docs/guides/sessions-and-state.md "Session data"): on a
 * real Redis, a call whose method never reads `ctx.session` sends no command for it, while
 * a method that reads or writes its data still sees and keeps it.
 */
import { expect, it } from "vitest";
import { Redis } from "ioredis";
import { openViewer, rpc } from "../helpers/http.js";
import { startServer } from "../helpers/server.js";
import { tempApp } from "../helpers/app-root.js";
import { describeWithRedis, useRedis } from "../helpers/redis.js";

const METHODS = `
export function echo(_ctx, input) { return input; }
export function logged(ctx, input) { ctx.log.info("echo"); return { input, method: ctx.method }; }
export function helped(ctx) { return describe(ctx); }
export function remember(ctx, value) { ctx.session.value = value; return "kept"; }
export function recall(ctx) { return ctx.session.value ?? null; }
function describe(ctx) { return Object.keys(ctx.session); }
`;

async function hgetallCalls(admin: Redis): Promise<number> {
  const stats = (await admin.info("commandstats")) as string;
  return Number(/cmdstat_hgetall:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

describeWithRedis("session data loaded only for methods that can read it", () => {
  const redis = useRedis();

  it("asks Redis nothing for methods that never read ctx.session, and keeps the data of those that do", async () => {
    const root = tempApp({ files: { "plugins/p/m.server.mjs": METHODS } });
    const app = await startServer({ root, config: { server: { redis: { url: redis.url } } } });
    const admin = new Redis(redis.url);
    try {
      const viewer = await openViewer(app.url);
      const call = (method: string, ...args: unknown[]) => rpc(app.url, `plugin/p/${method}`, { viewer, body: { args } });
      expect((await call("remember", "teal")).status).toBe(200);

      const before = await hgetallCalls(admin);
      expect((await call("echo", { n: 1 })).body).toEqual({ result: { n: 1 } });
      expect((await call("logged", 2)).body).toEqual({ result: { input: 2, method: "logged" } });
      expect(await hgetallCalls(admin)).toBe(before);

      // Passed on to a helper: the method may read the data, so it is loaded.
      expect((await call("helped")).body).toEqual({ result: ["id", "createdAt", "value"] });
      expect((await call("recall")).body).toEqual({ result: "teal" });
      expect(await hgetallCalls(admin)).toBe(before + 2);
    } finally {
      admin.disconnect();
      await app.close();
    }
  });
});
