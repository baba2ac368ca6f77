// The baseline for the gateway benchmark: a bare node:http handler doing the same work a
// session-bound RPC call needs — session cookie signature check, CSRF header check, JSON
// body round trip — and nothing else (no routing table, no logging, no limits).
import { createServer } from "node:http";
import { viewerSession } from "./viewer-session.mjs";

const viewer = viewerSession();

createServer((req, res) => {
  if (req.url === "/health" || req.url === "/") {
    viewer.servePage(res);
    return;
  }
  if (!viewer.passes(req, res)) return;
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ result: body.args[0] }));
  });
}).listen(Number(process.env.PORT), "127.0.0.1");
