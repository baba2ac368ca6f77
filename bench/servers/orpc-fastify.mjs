// oRPC 1.x on its Fastify adapter for the rpc benchmark: the echo of orpc-router.mjs under
// /rpc through oRPC's RPC handler, Fastify's JSON parser reading the body (the adapter uses
// a body Fastify has parsed), Fastify's defaults otherwise (no logger).
import Fastify from "fastify";
import { RPCHandler } from "@orpc/server/fastify";
import { echoRouter } from "./orpc-router.mjs";
import { viewerSession } from "./viewer-session.mjs";

const viewer = viewerSession();
const handler = new RPCHandler(echoRouter(viewer));
const app = Fastify({ logger: false });

viewer.routePage(app);

app.all("/rpc/*", async (req, reply) => {
  const { matched } = await handler.handle(req, reply, { prefix: "/rpc", context: { headers: req.headers } });
  if (!matched) reply.code(404).send({});
});

await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1" });
