// The baseline for the streaming benchmark: a bare node:http handler doing what a streaming
// call needs — the session cookie and CSRF checks, the JSON body, then the same NDJSON
// records the gateway writes (`{"event":…}` lines, waiting for `drain` when the socket is
// full, one terminal record) — and nothing else.
import { createServer } from "node:http";
import { viewerSession } from "./viewer-session.mjs";

const viewer = viewerSession();
const TEXT = "a token-sized piece of text";

createServer((req, res) => {
  if (req.url === "/health" || req.url === "/") {
    viewer.servePage(res);
    return;
  }
  if (!viewer.passes(req, res)) return;
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", async () => {
    const n = JSON.parse(Buffer.concat(chunks).toString("utf8")).args[0];
    res.writeHead(200, { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store" });
    res.flushHeaders();
    for (let i = 0; i < n; i += 1) {
      if (!res.write(`{"event":${JSON.stringify({ type: "delta", i, text: TEXT })}}\n`)) {
        await new Promise((resolve) => res.once("drain", resolve));
      }
    }
    res.end(`{"done":true,"ok":true,"result":${JSON.stringify({ events: n })}}\n`);
  });
}).listen(Number(process.env.PORT), "127.0.0.1");
