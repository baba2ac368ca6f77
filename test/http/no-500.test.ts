// No request a client can send is answered 5xx or logged as a server error: hand-made
// hostile requests to the RPC route, the proxy and the static routes (odd verbs, bad
// Content-Types, bodies of every wrong shape, prototype keys, huge numbers, broken
// escapes, deep nesting, floods of arguments and headers, HEAD and conditional requests).
// Each must answer below 500; what each answers is the business of its own test file.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../helpers/server.js";
import { tempApp } from "../helpers/app-root.js";
import { openViewer, send, type Viewer } from "../helpers/http.js";
import { TestUpstream } from "../helpers/upstream.js";

const METHODS = `
export const policy = {
  echo: { auth: { public: true } },
  isolated: { auth: { public: true }, runtime: { isolation: "worker" } },
  words: { auth: { public: true }, runtime: { streaming: true } },
};
export function echo(_ctx, value) { return value ?? null; }
export function isolated(_ctx, value) { return value ?? null; }
export async function words(ctx, value) { await ctx.emit(value ?? "word"); return "done"; }
export function keep(ctx, value) { ctx.session.kept = value; return "kept"; }
`;

const RPC = ["/__rpc/plugin/p/echo", "/__rpc/plugin/p/isolated", "/__rpc/plugin/p/words", "/__rpc/plugin/p/keep"];
const ROUTES = [...RPC, "/proxy/up/x", "/app.js", "/big.css", "/", "/__app/client.js", "/plugins/p/ui.js"];
const VERBS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "QUERY", "SEARCH", "PROPFIND"];

const deepArray = (levels: number) => "[".repeat(levels) + "]".repeat(levels);

/** Bodies of every wrong shape, each sent to every RPC method. */
const RPC_BODIES: Record<string, string | Buffer> = {
  empty: "",
  blank: "   ",
  null: "null",
  number: "1e999",
  array: "[]",
  string: '"x"',
  "args an object": '{"args":{}}',
  "args a string": '{"args":"x"}',
  "args null": '{"args":null}',
  "huge numbers": '{"args":[1e400,-1e400,123456789012345678901234567890]}',
  "a 100 000-digit number": `{"args":[${"9".repeat(100_000)}]}`,
  "lone surrogates and NUL": '{"args":["\\ud800","\\u0000","\\uffff"]}',
  "a bad escape": '{"args":["\\x"]}',
  "bytes that are not UTF-8": Buffer.concat([Buffer.from('{"args":["'), Buffer.from([0xff, 0xfe, 0xc0, 0xae]), Buffer.from('"]}')]),
  "__proto__ at the top": '{"__proto__":{"polluted":1},"args":[]}',
  "__proto__ in args": '{"args":[{"__proto__":{"polluted":1}}]}',
  "constructor.prototype in args": '{"args":[{"constructor":{"prototype":{"polluted":1}}}]}',
  "viewerId a number": '{"viewerId":1}',
  "contextId an object": '{"contextId":{}}',
  "contextId __proto__": '{"contextId":"__proto__"}',
  "contextId toString": '{"contextId":"toString"}',
  "duplicate keys": '{"args":[1],"args":[2]}',
  "trailing garbage": '{"args":[]}garbage',
  "a byte-order mark": '\ufeff{"args":[]}',
  "50 000 keys": JSON.stringify(Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i]))),
  "125 000 arguments": JSON.stringify({ args: new Array(125_000).fill(1) }),
  "8 000 levels of arrays": `{"args":[${deepArray(8000)}]}`,
  "3 000 levels of objects": `{"args":[${'{"a":'.repeat(3000)}1${"}".repeat(3000)}]}`,
};

const CONTENT_TYPES = ["text/plain", "application/json; charset=utf-16", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json;;;", "*/*", 'application/json; charset="', ""];

interface Case {
  name: string;
  path: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Sent without the viewer's cookie and CSRF header. */
  anonymous?: boolean;
}

function cases(): Case[] {
  const all: Case[] = [];
  for (const path of ROUTES) {
    for (const method of VERBS) {
      const body = method === "GET" || method === "HEAD" ? undefined : '{"args":[1]}';
      all.push({ name: `${method} ${path}`, path, method, body, headers: { "content-type": "application/json" } });
      if (body) all.push({ name: `${method} ${path}, 20 000 levels deep`, path, method, body: deepArray(20_000), headers: { "content-type": "application/json" } });
    }
  }
  for (const path of RPC) {
    const stream: Record<string, string> = path.endsWith("/words") ? { "x-app-rpc-stream": "1" } : {};
    for (const [name, body] of Object.entries(RPC_BODIES)) all.push({ name: `${path}: ${name}`, path, method: "POST", body, headers: { "content-type": "application/json", ...stream } });
  }
  for (const type of CONTENT_TYPES) {
    for (const path of ["/__rpc/plugin/p/echo", "/proxy/up/x", "/app.js"]) {
      all.push({ name: `${path} as ${JSON.stringify(type)}`, path, method: "POST", body: '{"args":[1]}', headers: { "content-type": type } });
    }
  }
  for (const path of ["/app.js", "/big.css", "/__app/client.js"]) {
    for (const method of ["GET", "HEAD"]) {
      const variants: Array<Record<string, string>> = [
        {},
        { "if-none-match": "*" },
        { "if-modified-since": new Date(Date.now() + 86_400_000).toUTCString() },
        { "if-modified-since": "garbage", "if-none-match": '"' },
        { "if-match": '"abc"' },
        { "if-unmodified-since": "Thu, 01 Jan 1970 00:00:00 GMT" },
        { range: "bytes=5-1" },
        { range: "bytes=99999999999999999999-" },
        { range: "bytes=a-b" },
        { range: `bytes=${"0-1,".repeat(500)}2-3` },
        { "accept-encoding": "gzip;q=abc, br;q=-1, *;q=0, identity;q=0" },
      ];
      for (const headers of variants) {
        all.push({ name: `${method} ${path} ${JSON.stringify(headers).slice(0, 60)}`, path, method, headers: { "accept-encoding": "gzip, br", ...headers } });
      }
    }
  }
  const flood: Record<string, string> = {};
  for (let i = 0; i < 900; i += 1) flood[`x-f${i}`] = "1";
  all.push({ name: "900 headers through the proxy", path: "/proxy/up/x", headers: flood });
  all.push({ name: "a forged session on the proxy", path: "/proxy/up/x", anonymous: true, headers: { cookie: "app_session=%%%; =; ;;", "x-app-csrf": "x" } });
  all.push({ name: "a forged session on a session method", path: "/__rpc/plugin/p/keep", method: "POST", anonymous: true, body: "{}", headers: { "content-type": "application/json", cookie: `app_session=${"A".repeat(4000)}`, "x-app-csrf": "x" } });
  all.push({ name: "a malformed traceparent and tracestate", path: "/__rpc/plugin/p/echo", method: "POST", body: "{}", headers: { traceparent: "zz", tracestate: ",".repeat(4000) } });
  all.push({ name: "cross-site to a session method", path: "/__rpc/plugin/p/keep", method: "POST", body: "{}", headers: { origin: "null", "sec-fetch-site": "cross-site" } });
  all.push({ name: "X-Forwarded-* junk through the proxy", path: "/proxy/up/x", headers: { "x-forwarded-for": "\u00ff", "x-forwarded-host": "a b", "x-forwarded-proto": "javascript" } });
  for (const path of ["/%zz", "/%00", "/app.js%00", "/..%2f..%2fetc/passwd", "/plugins/p/p.server.mjs", "/plugins/__proto__/x", "/modules/constructor/x", "/__rpc/plugin/p/__proto__", "/__rpc/plugin/__proto__/toString", "/__rpc/%zz/p/x", "/proxy/__proto__/x", "/proxy/up/%2e%2e/x", "/proxy/up/%zz", "/proxy", `/${"a/".repeat(3000)}`]) {
    all.push({ name: `GET ${path.slice(0, 40)}`, path });
    all.push({ name: `POST ${path.slice(0, 40)}`, path, method: "POST", body: "{}", headers: { "content-type": "application/json" } });
  }
  return all;
}

describe("no request a client can send answers 5xx", () => {
  let upstream: TestUpstream;
  let app: TestServer;
  let viewer: Viewer;
  beforeAll(async () => {
    upstream = await new TestUpstream().start();
    const root = tempApp({
      files: { "plugins/p/p.server.mjs": METHODS, "plugins/p/ui.js": "export {};\n", "public/app.js": "console.log(1);\n", "public/big.css": `/* ${"x ".repeat(2000)} */\n` },
    });
    app = await startServer({ root, config: { server: { secure: { proxies: { up: { baseUrl: upstream.origin, headers: { "x-api-key": "k" } } } } } } });
    viewer = await openViewer(app.url);
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it("answers every hostile request below 500 and logs no server error", async () => {
    const table = cases();
    const failures: string[] = [];
    for (const entry of table) {
      const answer = await send(app.url, entry.path, {
        method: entry.method ?? "GET",
        viewer: entry.anonymous ? null : viewer,
        headers: entry.headers,
        body: entry.body,
        timeoutMs: 10_000,
      }).catch((error: Error) => ({ status: `failed: ${error.message}` }));
      if (typeof answer.status !== "number" || answer.status >= 500) failures.push(`${entry.name}: ${answer.status}`);
    }
    expect(failures).toEqual([]);
    expect(table.length).toBeGreaterThan(300);
    expect(app.logs.lines.filter((line) => Number(line.level) >= 50).map((line) => line.msg)).toEqual([]);
  }, 120_000);
});
