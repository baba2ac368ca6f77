/**
 * Compression of the static files and pages (docs/reference/http-routes.md): `gzip` or `br` as the
 * client's `Accept-Encoding` asks, with @fastify/compress. Registered
 * only inside the static routes' own scope, so RPC answers, NDJSON streams and proxied
 * bodies are never touched (a compressor buffers what it is given until it has enough to
 * emit, which would hold back a stream's events). The browser client itself is compressed
 * once, at build time (static-routes.ts says why).
 *
 * Pages are compressed too, although they carry the CSRF token: BREACH needs the attacker's
 * input reflected in the same compressed answer, and a page reflects nothing of its request.
 */
import { Readable } from "node:stream";
import { constants } from "node:zlib";
import fastifyCompress from "@fastify/compress";
import type { FastifyInstance } from "fastify";

/** Smaller answers go out as they are: the bytes saved do not pay for a compressor. */
export const COMPRESS_THRESHOLD_BYTES = 1024;

/**
 * Text, scripts, JSON, XML (SVG too) and WebAssembly. Not NDJSON: a streamed answer's type,
 * never a file's. Not `application/octet-stream` (@fastify/compress's default takes it): an
 * unknown binary is most likely compressed already.
 */
const COMPRESSIBLE = /^(?:text\/(?!event-stream)|application\/(?:javascript|ecmascript|x-javascript|wasm)\b|[^;]*[/+](?:json|xml)(?:;|$))/i;

export async function compressAnswers(scope: FastifyInstance): Promise<void> {
  // @fastify/compress applies its threshold to buffered answers only and compresses every
  // file stream, whatever its size: a 300-byte stylesheet cost about 60 µs of CPU for a
  // brotli or gzip stream, as much as serving it. A small file's stream is read here first
  // (it is a single read), so that the plugin sees a buffer under its threshold.
  //
  // The routes of this scope answer HEAD themselves (static-routes.ts says why), so a HEAD
  // passes here like a GET: @fastify/send's HEAD and 304 bodies are an empty stream of
  // strings, not Buffers, and the Content-Length it set is kept (Fastify leaves a HEAD's
  // and a 304's alone).
  scope.addHook("onSend", async (_request, reply, payload) => {
    if (!(payload instanceof Readable)) return payload;
    // A 304's empty stream would be compressed as well, and the 304 labelled with a
    // Content-Encoding that a cache then copies onto the answer it stored.
    if (reply.statusCode === 304) return null;
    const length = Number(reply.getHeader("content-length"));
    if (!(length < COMPRESS_THRESHOLD_BYTES)) return payload;
    const chunks = (await payload.toArray()) as Array<Buffer | string>;
    return Buffer.concat(chunks.map((chunk) => (typeof chunk === "string" ? Buffer.from(chunk) : chunk)));
  });
  await scope.register(fastifyCompress, {
    // gzip first where the client takes both (browsers do): on viewer scripts and styles
    // brotli at quality 4 came out no smaller than gzip's default level (the client script:
    // 10.2 KB against 10.0 KB of 27.8 KB) for 2.6 times the CPU per answer (2.1 ms against
    // 0.8 ms, `npm run bench` section static). Brotli's better ratios need qualities too
    // slow per request; the client script gets them once, at build time.
    encodings: ["gzip", "br"],
    threshold: COMPRESS_THRESHOLD_BYTES,
    customTypes: COMPRESSIBLE,
    // Request bodies: these routes read none.
    globalDecompression: false,
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } },
  });
}
