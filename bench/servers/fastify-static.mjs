// The baseline for the static section: a bare Fastify 5 serving STATIC_ROOT with
// @fastify/static and its defaults (ETag, Last-Modified, 304), and with
// STATIC_COMPRESS=1 @fastify/compress in front, set as the gateway sets it (br or gzip,
// brotli quality 4, 1 KiB threshold).
import Fastify from "fastify";
import fastifyStatic from "@fastify/static";
import fastifyCompress from "@fastify/compress";

const app = Fastify({ logger: false });
if (process.env.STATIC_COMPRESS === "1") {
  await app.register(fastifyCompress, { encodings: ["gzip", "br"], threshold: 1024, customTypes: /^(?:text\/|application\/javascript)/ });
}
await app.register(fastifyStatic, { root: process.env.STATIC_ROOT });
app.get("/health", (_request, reply) => reply.send("ok"));
await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1" });
