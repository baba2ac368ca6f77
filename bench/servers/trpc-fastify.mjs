// tRPC 11 on its Fastify adapter for the rpc benchmark: the echo of trpc-router.mjs under
// /trpc, Fastify's defaults otherwise (no logger, as the other contenders write no log).
import Fastify from "fastify";
import { fastifyTRPCPlugin } from "@trpc/server/adapters/fastify";
import { echoRouter } from "./trpc-router.mjs";
import { viewerSession } from "./viewer-session.mjs";

const viewer = viewerSession();
const app = Fastify({ logger: false });

viewer.routePage(app);

await app.register(fastifyTRPCPlugin, {
  prefix: "/trpc",
  trpcOptions: { router: echoRouter(viewer), createContext: ({ req }) => ({ headers: req.headers }) },
});

await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1" });
