/**
 * The bundler entry (`<package>/client`) loaded on a page that also has /__app/client.js:
 * both copies must share the secrets, the auth handlers and the application HttpClient.
 */
import { expect, it } from "vitest";
import { describeInBrowser, useBrowserFixture, type PageWindow } from "../helpers/browser.js";

describeInBrowser("ESM entry next to client.js", () => {
  const fx = useBrowserFixture();

  it("exports the API and shares AppUser, auth handlers and the application client with the page globals", async () => {
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as PageWindow;
      // Built at run time so that the test transform leaves the page's import() alone.
      const load = new Function("url", "return import(url)") as (url: string) => Promise<Record<string, any>>;
      const m = await load("/__test/esm/index.js");
      const exported = ["HttpClient", "HttpError", "TimeoutError", "ResponseParseError", "StreamError", "AppUser", "appUser", "AppElement", "createXServer"].filter(
        (name) => m[name] === undefined,
      );
      const sameStore = m.appUser === w.AppUser;
      m.appUser.setSecret("shared", "jwt", "esm");
      m.HttpClient.addAuthHandler("esm-key", ({ secret }: { secret: string }) => ({ "X-Esm-Key": secret }));
      w.AppUser.setSecret("k", "esm-key", "esm");
      const viaGlobal = await new w.HttpClient({ auth: { contextId: "esm", types: ["jwt", "esm-key"] } }).get("/echo/shared");
      w.xserver.setHttpClient(new w.HttpClient({ auth: { contextId: "esm", types: ["jwt"] } }));
      await new m.AppElement({ kind: "module", id: "m" }).server().viaEsm();
      return { exported, sameStore, auth: viaGlobal.headers.authorization, key: viaGlobal.headers["x-esm-key"] };
    });
    expect(result).toEqual({ exported: [], sameStore: true, auth: "Bearer shared", key: "k" });
    expect(fx.server.hits("/__rpc/module/m/viaEsm")[0]?.headers.authorization).toBe("Bearer shared");
  });
});
