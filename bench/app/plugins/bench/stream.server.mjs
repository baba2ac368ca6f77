// Streaming methods for bench/stream.mjs: token-sized events as fast as `emit` lets them go
// (inline and in a worker thread), and large ones for the stopped-reader memory check.
const TEXT = "a token-sized piece of text";

let emitted = 0;

export const policy = {
  tokens: { runtime: { streaming: true, timeoutMs: 600_000 } },
  tokensIsolated: { runtime: { streaming: true, timeoutMs: 600_000, isolation: "worker" } },
  large: { runtime: { streaming: true, timeoutMs: 600_000 } },
  emittedSoFar: {},
};

/** `n` events `{ type, i, text }`, each awaited. */
export async function tokens(ctx, n = 1_000) {
  for (let i = 0; i < n; i += 1) await ctx.emit({ type: "delta", i, text: TEXT });
  return { events: n };
}

export const tokensIsolated = tokens;

/** `n` events of `size` characters; counts what was emitted for `emittedSoFar`. */
export async function large(ctx, { n = 100_000, size = 16_384 } = {}) {
  emitted = 0;
  const text = "x".repeat(size);
  for (let i = 0; i < n; i += 1) {
    await ctx.emit({ i, text });
    emitted += 1;
  }
  return { events: n };
}

export function emittedSoFar() {
  return emitted;
}
