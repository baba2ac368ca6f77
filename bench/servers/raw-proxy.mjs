// The baselines of the proxy benchmark, one script with two roles (port from $PORT):
//
//   node raw-proxy.mjs upstream
//     The origin every proxy is measured against: `/small` answers 1 KiB, `/big?bytes=N`
//     streams N bytes (a 64 KiB block repeated, backpressure honoured).
//
//   node raw-proxy.mjs proxy <upstreamPort> [--session]
//     A minimal node:http pass-through proxy for `/proxy/bench/<path>`: keep-alive agent,
//     hop-by-hop and Host headers dropped, bodies piped both ways, nothing else. With
//     `--session` it also checks the session cookie and CSRF header the way Counterpart's
//     proxy must (same SessionSigner), and serves `/` with a session like the viewer page.
import { createServer, request, Agent } from "node:http";
import { viewerSession } from "./viewer-session.mjs";

const [role, upstreamPort, flag] = process.argv.slice(2);
const port = Number(process.env.PORT);

if (role === "upstream") {
  const small = Buffer.alloc(1024, "a");
  const block = Buffer.alloc(64 * 1024, "b");
  createServer((req, res) => {
    if (req.url.startsWith("/big")) {
      let left = Number(new URL(req.url, "http://x").searchParams.get("bytes") ?? 0);
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": left });
      const pump = () => {
        while (left > 0) {
          const chunk = left >= block.length ? block : block.subarray(0, left);
          left -= chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
      return;
    }
    req.resume();
    res.writeHead(200, { "content-type": "text/plain", "content-length": small.length });
    res.end(small);
  }).listen(port, "127.0.0.1");
} else if (role === "proxy") {
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const checkSession = flag === "--session";
  const viewer = viewerSession();
  const HOP = new Set(["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host", "cookie", "x-app-csrf"]);
  const PREFIX = "/proxy/bench";

  createServer((req, res) => {
    if (!req.url.startsWith(PREFIX + "/")) {
      viewer.servePage(res);
      return;
    }
    if (checkSession && !viewer.passes(req, res)) return;
    const headers = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP.has(name)) headers[name] = value;
    const upstream = request(
      { host: "127.0.0.1", port: Number(upstreamPort), path: req.url.slice(PREFIX.length), method: req.method, headers, agent },
      (upRes) => {
        const out = {};
        for (const [name, value] of Object.entries(upRes.headers)) if (!HOP.has(name) && name !== "set-cookie") out[name] = value;
        res.writeHead(upRes.statusCode, out);
        upRes.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }).listen(port, "127.0.0.1");
} else {
  console.error("usage: raw-proxy.mjs upstream | proxy <upstreamPort> [--session]");
  process.exit(2);
}
