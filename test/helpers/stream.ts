/**
 * Reading a streaming RPC answer over a real socket, the way a test needs to: each NDJSON
 * record as it arrives (with when it arrived), the raw body, and control of the reader
 * (pause it, resume it, hang up).
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import type { Viewer } from "./http.js";

export interface StreamRecord {
  [key: string]: any;
  /** performance.now() when its line arrived. */
  at: number;
}

export interface StreamOptions {
  viewer?: Viewer | null;
  args?: unknown[];
  /** Sends `X-APP-Rpc-Stream: 1` unless false. */
  streamHeader?: boolean;
  headers?: Record<string, string>;
}

export interface OpenStream {
  status: number;
  headers: IncomingMessage["headers"];
  /** performance.now() when the headers arrived. */
  headersAt: number;
  records: StreamRecord[];
  /** The body so far, as text. */
  body(): string;
  /** Body bytes received so far. */
  bytes(): number;
  /** Resolves with the record matching `match` once it has arrived. */
  waitFor(match: (record: StreamRecord) => boolean, timeoutMs?: number): Promise<StreamRecord>;
  /** Resolves when the response ends ("end") or the connection drops before that ("closed"). */
  finished: Promise<"end" | "closed">;
  pause(): void;
  resume(): void;
  /** Hangs up. */
  destroy(): void;
}

export function openStream(url: string, path: string, options: StreamOptions = {}): Promise<OpenStream> {
  const target = new URL(url);
  const headers: Record<string, string> = { "content-type": "application/json", ...options.headers };
  if (options.streamHeader !== false) headers["x-app-rpc-stream"] = "1";
  if (options.viewer) {
    headers.cookie = options.viewer.cookie;
    headers["x-app-csrf"] = options.viewer.csrf;
  }
  return new Promise((resolve, reject) => {
    let req: ClientRequest | undefined = undefined;
    req = httpRequest({ host: target.hostname, port: target.port, path: `/__rpc/${path}`, method: "POST", headers, agent: false }, (res) => {
      const headersAt = performance.now();
      const chunks: Buffer[] = [];
      let size = 0;
      let pending = "";
      const records: StreamRecord[] = [];
      const watchers = new Set<() => void>();
      res.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        pending += chunk.toString("utf8");
        let newline: number;
        while ((newline = pending.indexOf("\n")) !== -1) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          if (line.trim() !== "") records.push({ ...(JSON.parse(line) as object), at: performance.now() });
        }
        for (const watcher of watchers) watcher();
      });
      const finished = new Promise<"end" | "closed">((done) => {
        res.on("end", () => done("end"));
        res.on("close", () => done(res.complete ? "end" : "closed"));
        res.on("error", () => done("closed"));
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        headersAt,
        records,
        body: () => Buffer.concat(chunks).toString("utf8"),
        bytes: () => size,
        waitFor(match, timeoutMs = 5_000) {
          return new Promise((found, fail) => {
            const check = () => {
              const record = records.find(match);
              if (!record) return false;
              watchers.delete(check);
              clearTimeout(timer);
              found(record);
              return true;
            };
            const timer = setTimeout(() => {
              watchers.delete(check);
              fail(new Error(`no matching record within ${timeoutMs} ms; got ${JSON.stringify(records.slice(-5))}`));
            }, timeoutMs);
            if (!check()) watchers.add(check);
          });
        },
        finished,
        pause: () => res.pause(),
        resume: () => res.resume(),
        destroy: () => req?.destroy(),
      });
    });
    req.on("error", reject);
    req.end(JSON.stringify({ args: options.args ?? [] }));
  });
}
