/**
 * Compression of the static files and pages (docs/reference/http-routes.md "HTTP routes"): `gzip` or `br` as the
 * client's `Accept-Encoding` asks. Registered only inside the static routes' own scope, so
 * RPC answers, NDJSON streams and proxied bodies are never touched (a compressor buffers
 * what it is given until it has enough to emit, which would hold back a stream's events).
 * The browser client itself is compressed once, at build time (static-routes.ts says why).
 *
 * Pages are compressed too, although they carry the CSRF token: BREACH needs the attacker's
 * input reflected in the same compressed answer, and a page reflects nothing of its request.
 *
 * One onSend hook over node:zlib rather than @fastify/compress: that plugin tests every
 * answer with `instanceof Response`, which loads Node's bundled undici (fetch, WebSocket)
 * at the first page served, and it brings mime-db's table, readable-stream and minipass;
 * together about 3.5 MB of a started server's memory (docs/reference/project.md "Dependencies"), for the one
 * path used here: negotiate, compress a buffer or a stream, label the answer.
 */
import { Readable, pipeline } from "node:stream";
import { brotliCompressSync, constants, createBrotliCompress, createGzip, gzipSync } from "node:zlib";
import { negotiate } from "@fastify/accept-negotiator";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/** Smaller answers go out as they are: the bytes saved do not pay for a compressor. */
export const COMPRESS_THRESHOLD_BYTES = 1024;

/**
 * gzip first where the client takes both (browsers do): on viewer scripts and styles brotli
 * at quality 4 came out no smaller than gzip's default level (the client script: 10.2 KB
 * against 10.0 KB of 27.8 KB) for 2.6 times the CPU per answer (2.1 ms against 0.8 ms,
 * `npm run bench` section static). Brotli's better ratios need qualities too slow per
 * request; the client script gets them once, at build time.
 */
type Encoding = "gzip" | "br";
const ENCODINGS: Encoding[] = ["gzip", "br"];
const BROTLI_OPTIONS = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };

/**
 * Text, scripts, JSON, XML (SVG too) and WebAssembly. Not NDJSON: a streamed answer's type,
 * never a file's. Not `application/octet-stream`: an unknown binary is most likely
 * compressed already.
 */
const COMPRESSIBLE = /^(?:text\/(?!event-stream)|application\/(?:javascript|ecmascript|x-javascript|wasm)\b|[^;]*[/+](?:json|xml)(?:;|$))/i;

/** Buffers up to this size are compressed at once, in this thread; larger ones, and files, as a stream. */
const COMPRESS_AT_ONCE_BYTES = 64 * 1024;

export async function compressAnswers(scope: FastifyInstance): Promise<void> {
  // The routes of this scope answer HEAD themselves (static-routes.ts says why), so a HEAD
  // passes here like a GET and gets GET's headers: @fastify/send's HEAD and 304 bodies are
  // an empty stream of strings, and Fastify sends no body for either.
  scope.addHook("onSend", async (request, reply, payload) => {
    if (payload === null || payload === undefined) return payload;
    // A 304's empty stream would be compressed as well, and the 304 labelled with a
    // Content-Encoding that a cache then copies onto the answer it stored.
    if (reply.statusCode === 304) return null;
    const encoding = encodingFor(request, reply);
    if (!encoding) return payload;
    if (payload instanceof Readable) {
      const length = Number(reply.getHeader("content-length"));
      // A file's stream under the threshold is read here (it is a single read) and sent as
      // it is: a 300-byte stylesheet cost about 60 µs of CPU for a compressor stream, as
      // much as serving it.
      if (length < COMPRESS_THRESHOLD_BYTES) return bytesOf(payload);
      label(reply, encoding);
      reply.removeHeader("content-length");
      const compressor = encoding === "br" ? createBrotliCompress(BROTLI_OPTIONS) : createGzip();
      return pipeline(payload, compressor, (error) => {
        // A client that goes away closes the answer early; anything else is worth a line.
        if (error && error.code !== "ERR_STREAM_PREMATURE_CLOSE") reply.log.error({ err: error }, "compressing a static answer failed");
      });
    }
    if (typeof payload !== "string" && !Buffer.isBuffer(payload)) return payload;
    const bytes = Buffer.byteLength(payload);
    if (bytes < COMPRESS_THRESHOLD_BYTES) return payload;
    if (bytes > COMPRESS_AT_ONCE_BYTES) {
      label(reply, encoding);
      reply.removeHeader("content-length");
      return Readable.from([Buffer.isBuffer(payload) ? payload : Buffer.from(payload)]).pipe(encoding === "br" ? createBrotliCompress(BROTLI_OPTIONS) : createGzip());
    }
    const compressed = encoding === "br" ? brotliCompressSync(payload, BROTLI_OPTIONS) : gzipSync(payload);
    label(reply, encoding);
    reply.header("content-length", compressed.length);
    return compressed;
  });
}

/** The encoding to answer in, or null for the answer as it is. */
function encodingFor(request: FastifyRequest, reply: FastifyReply): Encoding | null {
  const accepted = request.headers["accept-encoding"];
  if (!accepted) return null;
  const current = reply.getHeader("content-encoding");
  if (current !== undefined && current !== "identity") return null;
  // Content-Range counts the bytes of the file as it is.
  if (reply.statusCode === 206 || reply.hasHeader("content-range")) return null;
  const type = reply.getHeader("content-type");
  if (typeof type !== "string" || !COMPRESSIBLE.test(type)) return null;
  // `*` takes any coding and `x-gzip` is gzip's old name (RFC 9110, section 12.5.3).
  const chosen = negotiate(accepted.toLowerCase().replace(/\*|x-gzip/g, "gzip"), ENCODINGS);
  return chosen === "gzip" || chosen === "br" ? chosen : null;
}

function label(reply: FastifyReply, encoding: Encoding): void {
  reply.header("content-encoding", encoding);
  const vary = reply.getHeader("vary");
  const values = vary === undefined ? [] : Array.isArray(vary) ? vary.map(String) : [String(vary)];
  if (!values.some((value) => /(?:^|,)\s*accept-encoding\s*(?:,|$)/i.test(value))) reply.header("vary", [...values, "accept-encoding"].join(", "));
}

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks = (await stream.toArray()) as Array<Buffer | string>;
  return Buffer.concat(chunks.map((chunk) => (typeof chunk === "string" ? Buffer.from(chunk) : chunk)));
}
