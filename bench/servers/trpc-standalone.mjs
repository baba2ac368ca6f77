// tRPC 11 on its standalone adapter (node:http) for the rpc benchmark: the echo of
// trpc-router.mjs under /trpc, the viewer page on / and /health from the same server.
import { createServer } from "node:http";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { echoRouter } from "./trpc-router.mjs";
import { viewerSession } from "./viewer-session.mjs";

const viewer = viewerSession();
const trpc = createHTTPHandler({
  router: echoRouter(viewer),
  basePath: "/trpc/",
  createContext: ({ req }) => ({ headers: req.headers }),
});

createServer((req, res) => {
  if (req.url === "/health" || req.url === "/") viewer.servePage(res);
  else trpc(req, res);
}).listen(Number(process.env.PORT), "127.0.0.1");
