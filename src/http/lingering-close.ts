/**
 * Lingering close (docs/guides/server-methods.md "Runtime protections"), as nginx does it. An answer sent while
 * the client is still uploading (a 413, a refused call) must close the connection: the
 * rest of the upload is not worth reading to keep it. But closing a socket with unread
 * data makes the kernel reset the connection, and the reset can overtake the answer: the
 * server's kernel drops what it had not sent yet, and a client still writing its upload
 * meets the reset on its next write, before it reads the answer (ECONNRESET or EPIPE
 * instead of the 413). So the answer goes out with `Connection: close`, the body is discarded
 * as it arrives, and once the answer is written the write side is closed (the client sees
 * the end of the answer) while reading goes on: at most LINGER_MAX_BYTES are read, and the
 * socket is destroyed after LINGER_MAX_MS, or after LINGER_IDLE_MS of silence, or as soon
 * as the body has ended.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FastifyInstance } from "fastify";

/** At most this much of an unread body is read and thrown away; then reading stops. */
export const LINGER_MAX_BYTES = 4 * 1024 * 1024;
/** At most this long after the answer is written. */
export const LINGER_MAX_MS = 2_000;
/** Closed sooner when the client sends nothing for this long. */
export const LINGER_IDLE_MS = 500;

const lingering = new WeakSet<Socket>();

/**
 * A declared body up to this size is left to Node, which reads and drops it after the
 * answer and keeps the connection: closing it would make every refused call (401, 403,
 * 404 with a small JSON body) pay for a new connection, about three times the CPU of the
 * refusal itself in `npm run bench` (section "refusals").
 */
export const DRAIN_MAX_BYTES = 64 * 1024;

/** A request whose declared body has not been read to its end. */
export function hasUnreadBody(req: IncomingMessage): boolean {
  if (req.readableEnded) return false;
  const declared = req.headers["content-length"];
  return (declared !== undefined && declared !== "0") || req.headers["transfer-encoding"] !== undefined;
}

/** A small declared body the gateway never started to read: worth draining to keep the connection. */
function drainable(req: IncomingMessage): boolean {
  return req.headers["transfer-encoding"] === undefined && Number(req.headers["content-length"]) <= DRAIN_MAX_BYTES && req.readableFlowing === null;
}

/**
 * Small unread bodies Node drains after the answer, each with the time by which it must
 * have arrived. One sweep for all of them rather than a timer and listeners per request: a
 * keep-alive socket serves thousands of requests, and a `close` listener per refusal piled
 * up on it (and made each removal slower), which a CPU profile of refused calls showed.
 */
const draining = new Map<IncomingMessage, number>();
let sweeper: NodeJS.Timeout | undefined;

/**
 * Lets Node read and drop a small unread body after the answer, keeping the connection; a
 * body that still has not arrived after about LINGER_MAX_MS ends the connection all the same.
 */
function drainKeepingConnection(req: IncomingMessage): void {
  draining.set(req, Date.now() + LINGER_MAX_MS);
  // Forgotten as soon as its body is in: held until the next sweep, each refused request
  // lived long enough to reach V8's old generation, and a CPU profile of refusals showed
  // that as twice the echo's garbage-collection time.
  req.once("end", forgetDrained);
  sweeper ??= setInterval(sweepDrains, LINGER_MAX_MS / 4).unref();
}

function forgetDrained(this: IncomingMessage): void {
  draining.delete(this);
}

/**
 * A refusal answered from the headers is sent while Node's parser may still be inside the
 * packet that carries the body: by the next tick the parser has read the rest of it. Only
 * a body still missing then is watched.
 */
function watchUnlessArrived(req: IncomingMessage): void {
  if (!req.complete && !req.socket.destroyed) drainKeepingConnection(req);
}

function sweepDrains(): void {
  const now = Date.now();
  for (const [req, deadline] of draining) {
    if (req.complete || req.socket.destroyed) {
      draining.delete(req);
    } else if (now >= deadline) {
      draining.delete(req);
      req.socket.destroy();
    }
  }
  if (draining.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/**
 * Call before an answer is sent. With `keepSmall`, an unread body of at most DRAIN_MAX_BYTES
 * that nobody started to read is drained and the connection kept (a refusal that is not
 * about the body itself). Any other unread body: the answer gets `Connection: close` and the connection lingers as described above; returns whether it
 * did. Calling it again for the same connection changes nothing.
 */
export function closeAfterAnswer(req: IncomingMessage, res: ServerResponse, keepSmall = false): boolean {
  if (!hasUnreadBody(req)) return false;
  if (keepSmall && drainable(req)) {
    // Usually the parser has the whole small body by now, or will once it is through the
    // current packet: Node drops it, nothing to watch.
    if (!req.complete) process.nextTick(watchUnlessArrived, req);
    return false;
  }
  if (!res.headersSent) res.setHeader("connection", "close");
  const socket = req.socket;
  // Everything already arrived: nothing is left on the wire to cause a reset.
  if (req.complete || socket.destroyed || lingering.has(socket)) return true;
  lingering.add(socket);
  linger(req, socket);
  return true;
}

/**
 * For the routes of a plugin whose handlers never read a body (static files, the dev
 * console, metrics): a request that carries one anyway gets the same close. A hook per
 * plugin rather than one for the whole server, which would cost every RPC call.
 */
export function closeWhenBodyIgnored(app: FastifyInstance): void {
  app.addHook("onSend", (request, reply, payload, done) => {
    closeAfterAnswer(request.raw, reply.raw);
    done(null, payload);
  });
}

function linger(req: IncomingMessage, socket: Socket): void {
  let discarded = 0;
  let answered = false;
  let idleTimer: NodeJS.Timeout | undefined;
  let totalTimer: NodeJS.Timeout | undefined;
  const destroy = () => socket.destroy();
  const enoughRead = () => discarded > LINGER_MAX_BYTES;
  // Once nothing more will come, close without cutting the answer's own last bytes.
  const closeWhenFlushed = () => {
    if (socket.writableFinished) destroy();
    else socket.once("finish", destroy);
  };
  // Reading the body ourselves (rather than letting Node drain it unseen after the answer)
  // is what lets us count it.
  req.on("data", (chunk: Buffer) => {
    discarded += chunk.length;
    if (!enoughRead()) return idleTimer?.refresh();
    // Enough read: stop reading rather than reset. The client's buffers then fill, its
    // writes wait, and a waiting client reads the answer (a Node client writing without
    // pause reads nothing until then). The time bound ends the connection.
    req.pause();
    clearTimeout(idleTimer);
  });
  req.on("end", () => {
    if (answered) closeWhenFlushed();
  });
  req.resume();
  // Node ends a `Connection: close` answer with destroySoon(): end the write side, then
  // destroy as soon as it is flushed, unread data or not. Lingering replaces that step.
  socket.destroySoon = () => {
    answered = true;
    socket.end();
    if (req.readableEnded) return closeWhenFlushed();
    totalTimer = setTimeout(destroy, LINGER_MAX_MS).unref();
    // Silence can only be told while reading.
    if (!enoughRead()) idleTimer = setTimeout(destroy, LINGER_IDLE_MS).unref();
  };
  socket.once("close", () => {
    clearTimeout(idleTimer);
    clearTimeout(totalTimer);
  });
}
