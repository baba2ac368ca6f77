/**
 * A tiny node:http server for the browser-client tests: it serves a viewer page that
 * loads dist/client/client.js (with or without `window.APP_CSRF_TOKEN`), records every
 * request, and answers each path from a script the test sets, or else echoes the
 * request back as JSON; a scripted answer may also be written in timed chunks, for the
 * streaming tests. Kept apart so that the real server can replace it later.
 */
import { readFileSync, existsSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

export const CLIENT_SCRIPT = fileURLToPath(new URL("../../dist/client/client.js", import.meta.url));
export const ESM_ENTRY = fileURLToPath(new URL("../../dist/client/index.js", import.meta.url));
export const CSRF_TOKEN = "csrf-token-1";

export interface RecordedRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  time: number;
  /** When the client closed the connection before the answer was complete. */
  clientClosedAt?: number;
  /**
   * When each of a scripted answer's `chunks` was written (`Date.now()`, the page's clock
   * too), for tests that ask whether the page had a piece before the next was sent.
   */
  chunksSentAt?: number[];
}

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  /** A string goes as it is; anything else as JSON with a JSON content type. */
  body?: unknown;
  /** Wait before sending anything. */
  delayMs?: number;
  /** Send the headers, then wait this long before the body. */
  stallBodyMs?: number;
  /** Drop the connection without an answer (a network error for the browser). */
  destroy?: boolean;
  /**
   * Send the headers at once, then these pieces one by one, `chunkDelayMs` apart (a
   * string as UTF-8, a number array as raw bytes, to split a character); `body` is then
   * not used.
   */
  chunks?: Array<string | number[]>;
  chunkDelayMs?: number;
  /** After the chunks, keep the answer open this long before ending it. */
  holdOpenMs?: number;
  /** After the chunks (and the hold), drop the connection instead of ending the answer. */
  destroyAfterChunks?: boolean;
}

export type Script = ScriptedResponse[] | ((request: RecordedRequest, index: number) => ScriptedResponse);

export interface FixtureServer {
  origin: string;
  requests: RecordedRequest[];
  /** Requests to one path (query excluded), CORS preflights left out. */
  hits(path: string): RecordedRequest[];
  /** Answers for a path: the n-th request gets the n-th entry, the last one repeats. */
  script(path: string, script: Script): void;
  reset(): void;
  close(): Promise<void>;
}

export interface FixtureOptions {
  /** Answer CORS preflights and allow any origin, for the cross-origin tests. */
  cors?: boolean;
}

const page = (token: string | undefined): string => `<!doctype html>
<html><head><meta charset="utf-8"><title>client test</title>
${token === undefined ? "" : `<script>window.APP_CSRF_TOKEN = ${JSON.stringify(token)};</script>`}
<script src="/__app/client.js"></script>
</head><body></body></html>`;

export async function startFixtureServer(options: FixtureOptions = {}): Promise<FixtureServer> {
  if (!existsSync(CLIENT_SCRIPT)) throw new Error(`${CLIENT_SCRIPT} is missing: run \`npm run build\` first`);
  const clientScript = readFileSync(CLIENT_SCRIPT);
  const requests: RecordedRequest[] = [];
  const scripts = new Map<string, Script>();
  const counters = new Map<string, number>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = req.url ?? "/";
      const recorded: RecordedRequest = {
        method: req.method ?? "GET",
        url,
        path: url.split("?")[0] ?? url,
        headers: { ...req.headers },
        body: Buffer.concat(chunks).toString("utf8"),
        time: Date.now(),
      };
      handle(recorded, req, res).catch(() => res.destroy());
    });
  });

  async function handle(recorded: RecordedRequest, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (options.cors === true) {
      res.setHeader("Access-Control-Allow-Origin", "*");
      if (recorded.method === "OPTIONS") {
        res.writeHead(204, {
          "Access-Control-Allow-Methods": "GET, POST, PUT, PATCH, DELETE",
          "Access-Control-Allow-Headers": String(req.headers["access-control-request-headers"] ?? "*"),
        });
        res.end();
        return;
      }
    }
    if (recorded.path === "/" || recorded.path === "/no-csrf.html") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(page(recorded.path === "/" ? CSRF_TOKEN : undefined));
      return;
    }
    if (recorded.path === "/__app/client.js") {
      res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" });
      res.end(clientScript);
      return;
    }
    if (recorded.path === "/__test/esm/index.js") {
      // The bundler entry, to check that it shares the page state with client.js.
      res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" });
      res.end(readFileSync(ESM_ENTRY));
      return;
    }
    if (recorded.path === "/favicon.ico") {
      res.writeHead(404).end();
      return;
    }
    requests.push(recorded);
    const script = scripts.get(recorded.path);
    if (script === undefined) {
      const echo = recorded.path.startsWith("/__rpc/")
        ? { result: { path: recorded.path, body: parseJson(recorded.body), csrf: recorded.headers["x-app-csrf"] ?? null } }
        : { method: recorded.method, url: recorded.url, headers: recorded.headers, body: recorded.body };
      await send(res, { body: echo }, recorded);
      return;
    }
    const index = counters.get(recorded.path) ?? 0;
    counters.set(recorded.path, index + 1);
    const answer = typeof script === "function" ? script(recorded, index) : script[Math.min(index, script.length - 1)];
    await send(res, answer ?? {}, recorded);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    hits: (path) => requests.filter((request) => request.path === path && request.method !== "OPTIONS"),
    script: (path, script) => {
      scripts.set(path, script);
      counters.delete(path);
    },
    reset: () => {
      requests.length = 0;
      scripts.clear();
      counters.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function send(res: ServerResponse, answer: ScriptedResponse, recorded: RecordedRequest): Promise<void> {
  res.once("close", () => {
    if (!res.writableFinished && !dropped.has(res)) recorded.clientClosedAt = Date.now();
  });
  if (answer.delayMs !== undefined) await sleep(answer.delayMs);
  if (res.destroyed) return;
  if (answer.destroy === true) {
    drop(res);
    return;
  }
  // No keep-alive: Chromium silently resends a request whose reused connection drops,
  // which would blur how many attempts the client itself made.
  const headers: Record<string, string> = { "cache-control": "no-store", connection: "close", ...answer.headers };
  let payload = "";
  if (answer.body !== undefined) {
    if (typeof answer.body === "string") payload = answer.body;
    else {
      payload = JSON.stringify(answer.body);
      if (!Object.keys(headers).some((name) => name.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
    }
  }
  res.writeHead(answer.status ?? 200, headers);
  if (answer.chunks !== undefined) return sendChunks(res, answer, answer.chunks, recorded);
  if (answer.stallBodyMs !== undefined) {
    res.flushHeaders();
    await sleep(answer.stallBodyMs);
    if (res.destroyed) return;
  }
  res.end(payload);
}

/** Answers the fixture cut itself, which are not the client going away. */
const dropped = new WeakSet<ServerResponse>();

function drop(res: ServerResponse): void {
  dropped.add(res);
  res.destroy();
}

async function sendChunks(res: ServerResponse, answer: ScriptedResponse, chunks: Array<string | number[]>, recorded: RecordedRequest): Promise<void> {
  res.flushHeaders();
  recorded.chunksSentAt = [];
  for (const [index, chunk] of chunks.entries()) {
    if (index > 0 && answer.chunkDelayMs !== undefined) await sleep(answer.chunkDelayMs);
    if (res.destroyed) return;
    recorded.chunksSentAt.push(Date.now());
    res.write(typeof chunk === "string" ? chunk : Buffer.from(chunk));
  }
  if (answer.holdOpenMs !== undefined) await sleep(answer.holdOpenMs);
  if (res.destroyed) return;
  if (answer.destroyAfterChunks === true) drop(res);
  else res.end();
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
