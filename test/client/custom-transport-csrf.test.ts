/**
 * RPC calls through a transport of the page's own (docs/guides/browser.md "The transport"):
 * any object with `request` (and `stream` for `$stream`) may carry them, like xOpat's
 * HttpClient, which adds `X-APP-CSRF` only in proxy mode because xOpat's xserver adds it
 * to RPC calls itself. So xserver, AppElement.server() and `$stream` calls add it on
 * same-origin calls whenever the page has a token; against the real server, in Chromium.
 */
import { join } from "node:path";
import { expect, it } from "vitest";
import { describeInBrowser, type PageWindow } from "../helpers/browser.js";
import { useServerPage } from "../helpers/server-page.js";

const ROOT = join(import.meta.dirname, "../fixtures/stream-app");

/**
 * A bare fetch transport that adds no header of its own: what it sends is what the RPC
 * layer asked for. It records each call's headers in `window.sentHeaders`.
 */
const BARE_TRANSPORT = `
window.sentHeaders = [];
const failure = async (response) => {
  const body = await response.json().catch(() => ({}));
  return Object.assign(new Error(body.error ?? "failed"), { status: response.status, code: body.code });
};
const send = (path, options) => {
  const headers = { "content-type": "application/json", ...(options.headers ?? {}) };
  window.sentHeaders.push(options.headers ?? {});
  return fetch(path, { method: options.method, headers, body: JSON.stringify(options.body), credentials: "same-origin", signal: options.signal });
};
window.bareTransport = {
  async request(path, options) {
    const response = await send(path, options);
    if (!response.ok) throw await failure(response);
    return response.json();
  },
  async stream(path, options) {
    const response = await send(path, options);
    if (!response.ok) throw await failure(response);
    const text = response.text();
    return {
      status: response.status, ok: true, headers: response.headers, url: response.url, raw: response,
      async *lines() {
        for (const line of (await text).split("\\n")) if (line.trim() !== "") yield JSON.parse(line);
      },
      text: () => text,
      cancel() {},
    };
  },
};
`;

interface TransportWindow extends PageWindow {
  bareTransport: unknown;
  sentHeaders: Array<Record<string, string>>;
}

describeInBrowser("RPC calls through a transport that adds no CSRF header", () => {
  const serverPage = useServerPage({ root: ROOT }, { initScripts: [BARE_TRANSPORT] });

  it("xserver with httpClient: a session-only method answers, with the page's token in X-APP-CSRF", async () => {
    const out = await serverPage.page.evaluate(async () => {
      const w = globalThis as unknown as TransportWindow;
      w.sentHeaders.length = 0;
      const value = await w.xserver.plugin.ticker.echo(7, { httpClient: w.bareTransport });
      return { value, headers: w.sentHeaders, token: w.APP_CSRF_TOKEN };
    });
    expect(out.value).toEqual({ value: 7 });
    expect(out.headers).toEqual([{ "X-APP-CSRF": out.token }]);
  });

  it("the global xserver's own transport, and AppElement.server({ client }), add it too", async () => {
    const out = await serverPage.page.evaluate(async () => {
      const w = globalThis as unknown as TransportWindow;
      const element = new w.AppElement({ kind: "plugin", id: "ticker" });
      const fromElement = await element.server({ client: w.bareTransport }).echo("element");
      const previous = w.xserver.httpClient;
      w.xserver.setHttpClient(w.bareTransport);
      try {
        return { fromElement, fromGlobal: await w.xserver.plugin.ticker.echo("global") };
      } finally {
        w.xserver.setHttpClient(previous);
      }
    });
    expect(out).toEqual({ fromElement: { value: "element" }, fromGlobal: { value: "global" } });
  });

  it("a $stream call through it streams its events and result, with the token beside the stream header", async () => {
    const out = await serverPage.page.evaluate(async () => {
      const w = globalThis as unknown as TransportWindow;
      w.sentHeaders.length = 0;
      const handle = w.xserver.plugin.ticker.$stream.count({ n: 2 }, { httpClient: w.bareTransport });
      const events: unknown[] = [];
      for await (const event of handle.events as AsyncIterable<unknown>) events.push(event);
      return { events, result: await handle.result, headers: w.sentHeaders, token: w.APP_CSRF_TOKEN };
    });
    expect(out.events).toEqual([{ i: 0 }, { i: 1 }]);
    expect(out.result).toEqual({ count: 2 });
    expect(out.headers).toEqual([{ "X-APP-CSRF": out.token, "X-APP-Rpc-Stream": "1" }]);
  });

  it("sends no token without one on the page, nor to a transport whose baseURL is another origin", async () => {
    const out = await serverPage.page.evaluate(async () => {
      const w = globalThis as unknown as TransportWindow;
      const seen: unknown[] = [];
      const elsewhere = {
        baseURL: "http://127.0.0.2:9/",
        request: (_path: string, options: { headers?: unknown }) => Promise.resolve(seen.push(options.headers ?? {}) && { result: 1 }),
      };
      await w.xserver.plugin.ticker.echo(1, { httpClient: elsewhere });
      const token = w.APP_CSRF_TOKEN;
      delete (w as { APP_CSRF_TOKEN?: string }).APP_CSRF_TOKEN;
      try {
        w.sentHeaders.length = 0;
        const refused = await w.xserver.plugin.ticker.echo(2, { httpClient: w.bareTransport }).then(
          () => null,
          (error: { status: number; code: string }) => ({ status: error.status, code: error.code }),
        );
        return { seen, refused, sent: w.sentHeaders };
      } finally {
        w.APP_CSRF_TOKEN = token;
      }
    });
    expect(out.seen).toEqual([{}]);
    expect(out.sent).toEqual([{}]);
    expect(out.refused).toEqual({ status: 403, code: "RPC_BAD_CSRF" });
  });
});
