// The baseline for the streaming benchmark: a bare node:http handler doing what a streaming
// call needs — the session cookie and CSRF checks, the JSON body, then the same NDJSON
// records the gateway writes (`{"event":…}` lines, waiting for `drain` when the socket is
// full, one terminal record) — and nothing else.
import { createServer } from "node:http";
import { SessionSigner } from "../../dist/auth/session.js";

const signer = new SessionSigner(process.env.APP_SESSION_SECRET, 3600);
const { token, session } = signer.issue();
const csrf = signer.csrfToken(session);
const TEXT = "a token-sized piece of text";

createServer((req, res) => {
  if (req.url === "/health" || req.url === "/") {
    res.setHeader("set-cookie", `app_session=${token}; Path=/`);
    res.end(`<script>window.APP_CSRF_TOKEN = "${csrf}";</script>`);
    return;
  }
  const cookie = /(?:^|;\s*)app_session=([^;]+)/.exec(req.headers.cookie ?? "")?.[1];
  const current = signer.verify(cookie);
  if (!current || !signer.checkCsrf(current, req.headers["x-app-csrf"])) {
    res.statusCode = 401;
    res.end("{}");
    return;
  }
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
