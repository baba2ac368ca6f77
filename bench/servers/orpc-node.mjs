// oRPC 1.x on its Node adapter (node:http) for the rpc benchmark: the echo of
// orpc-router.mjs under /rpc through oRPC's RPC handler, or with BENCH_ORPC_HANDLER=openapi
// through its OpenAPI handler (plain JSON in and out, routed by method and path); the
// viewer page on / and /health from the same server.
import { createServer } from "node:http";
import { OpenAPIHandler } from "@orpc/openapi/node";
import { RPCHandler } from "@orpc/server/node";
import { echoRouter } from "./orpc-router.mjs";
import { viewerSession } from "./viewer-session.mjs";

const viewer = viewerSession();
const router = echoRouter(viewer);
const handler = process.env.BENCH_ORPC_HANDLER === "openapi" ? new OpenAPIHandler(router) : new RPCHandler(router);

createServer(async (req, res) => {
  if (req.url === "/health" || req.url === "/") {
    viewer.servePage(res);
    return;
  }
  const { matched } = await handler.handle(req, res, { prefix: "/rpc", context: { headers: req.headers } });
  if (!matched) {
    res.statusCode = 404;
    res.end("{}");
  }
}).listen(Number(process.env.PORT), "127.0.0.1");
