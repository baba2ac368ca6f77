/**
 * docs/guides/proxy.md "Streaming, time limits, failures": while a request is proxied, its client
 * socket is closed once it has moved no byte, either way, for `idleMs`.
 *
 * Not `socket.setTimeout()`: while a write is pending (a download the client has stopped
 * reading), Node lets the first timeout pass whenever the write queue changed since the
 * last write was dispatched, which it always has by then, so such a client was cut only
 * after twice the time. Here the bytes that really moved (read from the client, or taken
 * by the kernel for it) are sampled a tenth of `idleMs` apart, at most a second.
 */
import type { Socket } from "node:net";

/** Starts watching; the returned function stops it. */
export function closeWhenIdle(socket: Socket, idleMs: number): () => void {
  const every = Math.min(1000, Math.max(10, Math.ceil(idleMs / 10)));
  // Nothing is read at the start (most requests end before the first sample): the first
  // sample counts as movement.
  let last = -1;
  let quietSince = 0;
  const timer = setInterval(() => {
    const moved = movedBytes(socket);
    if (moved !== last) {
      last = moved;
      quietSince = performance.now();
    } else if (performance.now() - quietSince >= idleMs) {
      clearInterval(timer);
      socket.destroy();
    }
  }, every).unref();
  return () => clearInterval(timer);
}

/**
 * Bytes read from the socket plus bytes the kernel took: what was handed to the socket,
 * less what still waits in its buffer and in libuv's write queue (`writeQueueSize`, the
 * figure Node's own timeout looks at).
 */
function movedBytes(socket: Socket): number {
  const queued = (socket as unknown as { _handle?: { writeQueueSize?: number } | null })._handle?.writeQueueSize ?? 0;
  return socket.bytesRead + (socket.bytesWritten ?? 0) - socket.writableLength - queued;
}
