// tRPC 11 on its Fastify adapter for the rpc benchmark: the echo of trpc-router.mjs under
// /trpc, Fastify's defaults otherwise (no logger, as the other contenders write no log).
import Fastify from "fastify";
import { fastifyTRPCPlugin } from "@trpc/server/adapters/fastify";
import { echoRouter } from "./trpc-router.mjs";
import { viewerSession } from "./viewer-session.mjs";

const viewer = viewerSession();
const app = Fastify({ logger: false });

const viewerPage = (_req, reply) => {
  reply.header("set-cookie", `app_session=${viewer.token}; Path=/`).type("text/html");
  return `<script>window.APP_CSRF_TOKEN = "${viewer.csrf}";</script>`;
};
app.get("/", viewerPage);
app.get("/health", viewerPage);

await app.register(fastifyTRPCPlugin, {
  prefix: "/trpc",
  trpcOptions: { router: echoRouter(viewer), createContext: ({ req }) => ({ headers: req.headers }) },
});

await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1" });
