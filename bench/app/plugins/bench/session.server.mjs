// Session data read and written on every call (bench/session.mjs): the cost of the store
// a server is given, memory or Redis, on the RPC echo's path.
export function counter(ctx, input) {
  ctx.session.count = (ctx.session.count ?? 0) + 1;
  ctx.session.last = input;
  return ctx.session.count;
}
