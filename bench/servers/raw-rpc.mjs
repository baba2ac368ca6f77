// The baseline for the gateway benchmark: a bare node:http handler doing the same work a
// session-bound RPC call needs — session cookie signature check, CSRF header check, JSON
// body round trip — and nothing else (no routing table, no logging, no limits).
import { createServer } from "node:http";
import { SessionSigner } from "../../dist/auth/session.js";

const signer = new SessionSigner(process.env.APP_SESSION_SECRET, 3600);
const { token, session } = signer.issue();
const csrf = signer.csrfToken(session);

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
  req.on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ result: body.args[0] }));
  });
}).listen(Number(process.env.PORT), "127.0.0.1");
