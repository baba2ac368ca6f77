// docs/reference/http-routes.md: a HEAD, a conditional request or a range a client sends to a
// static file is answered as HTTP says (GET's headers, 304, 412, 416), never 500, and
// logs no server error. Link checkers, CDNs and `curl -I` send exactly these.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { startServer, type TestServer } from "../helpers/server.js";
import { tempApp } from "../helpers/app-root.js";

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One request with exactly these headers (Node adds `Host` and `Connection` only). */
function send(url: string, path: string, method: string, headers: Record<string, string> = {}): Promise<Answer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: target.hostname, port: target.port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

const SMALL = "console.log('small');\n";
const BIG = `/* ${"a stylesheet that compresses well ".repeat(200)} */\n`;
const FUTURE = new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString();
const ENCODINGS: Array<Record<string, string>> = [{}, { "accept-encoding": "gzip, deflate, br" }];

describe("HEAD and conditional requests to static files", () => {
  let app: TestServer;
  beforeAll(async () => {
    app = await startServer({ root: tempApp({ files: { "public/app.js": SMALL, "public/big.css": BIG, "plugins/p/ui.js": SMALL } }) });
  });
  afterAll(() => app?.close());

  const serverErrors = () => app.logs.lines.filter((line) => Number(line.level) >= 50);

  it("answers HEAD with GET's status and headers and no body, small files and large, compressed or not", async () => {
    for (const path of ["/app.js", "/big.css", "/plugins/p/ui.js", "/__app/client.js", "/"]) {
      for (const headers of ENCODINGS) {
        const get = await send(app.url, path, "GET", headers);
        const head = await send(app.url, path, "HEAD", headers);
        const seen = (answer: Answer) => [path, headers, answer.status, answer.headers["content-type"], answer.headers["content-encoding"], answer.headers["content-length"]];
        expect(seen(head)).toEqual(seen(get));
        expect([path, head.body.length]).toEqual([path, 0]);
        if (path !== "/") expect([path, head.headers.etag]).toEqual([path, get.headers.etag]);
      }
    }
    expect((await send(app.url, "/app.js", "HEAD")).headers["content-length"]).toBe(String(Buffer.byteLength(SMALL)));
    expect(serverErrors()).toEqual([]);
  });

  it("answers a HEAD that matches the validators with 304, whatever the file's size", async () => {
    for (const path of ["/app.js", "/big.css", "/__app/client.js"]) {
      for (const headers of ENCODINGS) {
        // The client script's compressed forms are files of their own (their 304 names
        // the encoding its ETag stands for); a file compressed on the fly has none.
        const encoding = path === "/__app/client.js" ? (await send(app.url, path, "GET", headers)).headers["content-encoding"] : undefined;
        for (const condition of [{ "if-none-match": "*" }, { "if-modified-since": FUTURE }] as Array<Record<string, string>>) {
          const answer = await send(app.url, path, "HEAD", { ...headers, ...condition });
          expect([path, condition, answer.status, answer.body.length, answer.headers["content-encoding"], answer.headers["content-length"]]).toEqual([
            path,
            condition,
            304,
            0,
            encoding,
            undefined,
          ]);
        }
      }
    }
    expect(serverErrors()).toEqual([]);
  });

  it("answers a failed If-Match with 412 PRECONDITION_FAILED", async () => {
    for (const path of ["/app.js", "/big.css", "/__app/client.js"]) {
      for (const method of ["GET", "HEAD"]) {
        const answer = await send(app.url, path, method, { "if-match": '"abc"' });
        expect([path, method, answer.status]).toEqual([path, method, 412]);
        if (method === "GET") expect(JSON.parse(answer.body.toString("utf8"))).toEqual({ error: "Precondition failed", code: "PRECONDITION_FAILED", details: {} });
      }
    }
    expect(serverErrors()).toEqual([]);
  });

  it("answers an unsatisfiable range with 416 RANGE_NOT_SATISFIABLE and the file's length", async () => {
    for (const [path, range] of [
      ["/app.js", "bytes=5-1"],
      ["/big.css", "bytes=99999-"],
      ["/__app/client.js", "bytes=5-1"],
    ] as const) {
      const answer = await send(app.url, path, "GET", { range });
      expect([path, answer.status, answer.headers["content-range"]]).toEqual([path, 416, expect.stringMatching(/^bytes \*\/\d+$/)]);
      expect(JSON.parse(answer.body.toString("utf8"))).toEqual({ error: "Range not satisfiable", code: "RANGE_NOT_SATISFIABLE", details: {} });
    }
    // A satisfiable range still gets its part.
    const part = await send(app.url, "/app.js", "GET", { range: "bytes=0-6" });
    expect([part.status, part.body.toString("utf8")]).toEqual([206, "console"]);
    expect(serverErrors()).toEqual([]);
  });
});
