/**
 * AppUser in Chromium: the secret store (by type and context) and its events.
 */
import { expect, it } from "vitest";
import { describeInBrowser, useBrowserFixture, type PageWindow } from "../helpers/browser.js";

describeInBrowser("AppUser", () => {
  const fx = useBrowserFixture();

  it("stores, reads and removes secrets by type and context", async () => {
    const result = await fx.page.evaluate(() => {
      const w = globalThis as unknown as PageWindow;
      const u = w.AppUser;
      u.setSecret("a", "jwt", "ctx1");
      u.setSecret("b", "jwt", "ctx2");
      u.setSecret("c", "jwt");
      u.setSecret("d", "apikey", "ctx1");
      const read = [u.getSecret("jwt", "ctx1"), u.getSecret("jwt", "ctx2"), u.getSecret("jwt"), u.getSecret("apikey", "ctx1"), u.getSecret("apikey", "ctx2") ?? "absent"];
      const removed = [u.removeSecret("jwt", "ctx1"), u.removeSecret("jwt", "ctx1")];
      return { read, removed, after: u.getSecret("jwt", "ctx1") === undefined, other: u.getSecret("jwt", "ctx2") };
    });
    expect(result).toEqual({ read: ["a", "b", "c", "d", "absent"], removed: [true, false], after: true, other: "b" });
  });

  it("keeps type and context apart in its keys, and treats __proto__ as a plain name", async () => {
    const result = await fx.page.evaluate(() => {
      const w = globalThis as unknown as PageWindow;
      const u = new w.AppUserStore();
      u.setSecret("1", "a:b", "c");
      u.setSecret("2", "a", "b:c");
      u.setSecret("3", "__proto__", "__proto__");
      return [u.getSecret("a:b", "c"), u.getSecret("a", "b:c"), u.getSecret("__proto__", "__proto__"), u.getSecret("constructor") ?? "absent", u.getSecret("toString", "x") ?? "absent"];
    });
    expect(result).toEqual(["1", "2", "3", "absent", "absent"]);
  });

  it("raises secret-updated and secret-removed with { type, contextId }; handlers can be removed", async () => {
    const events = await fx.page.evaluate(() => {
      const w = globalThis as unknown as PageWindow;
      const u = new w.AppUserStore();
      const seen: unknown[] = [];
      const onUpdate = (p: unknown) => seen.push(["updated", p]);
      u.addHandler("secret-updated", onUpdate);
      u.addHandler("secret-removed", (p: unknown) => seen.push(["removed", p]));
      u.setSecret("x", "jwt", "c");
      u.removeSecret("jwt", "c");
      u.removeSecret("jwt", "c");
      u.removeHandler("secret-updated", onUpdate);
      u.setSecret("y", "jwt", "c");
      return seen;
    });
    expect(events).toEqual([
      ["updated", { type: "jwt", contextId: "c" }],
      ["removed", { type: "jwt", contextId: "c" }],
    ]);
  });

  it("is an event source for any name, and one throwing handler does not stop the others", async () => {
    const result = await fx.page.evaluate(() => {
      const w = globalThis as unknown as PageWindow;
      const u = w.AppUser;
      const calls: string[] = [];
      u.addHandler("login", () => {
        throw new Error("broken listener");
      });
      u.addHandler("login", (p: { user: string }) => calls.push(p.user));
      // raiseEvent says how many handlers it called.
      const counts = [u.raiseEvent("login", { user: "ada" }), u.raiseEvent("nobody-listens", {})];
      return { calls, counts };
    });
    expect(result).toEqual({ calls: ["ada"], counts: [2, 0] });
  });

  it("rejects a missing type or value", async () => {
    const names = await fx.page.evaluate(() => {
      const w = globalThis as unknown as PageWindow;
      const attempt = (fn: () => void): string | null => {
        try {
          fn();
          return null;
        } catch (e) {
          return (e as Error).name;
        }
      };
      return [attempt(() => w.AppUser.setSecret("v", "")), attempt(() => w.AppUser.setSecret(undefined, "jwt")), attempt(() => w.AppUser.getSecret())];
    });
    expect(names).toEqual(["TypeError", "TypeError", "TypeError"]);
  });
});
