// The RPC echo as a tRPC 11 user writes it, shared by the standalone and Fastify tRPC
// servers: the session cookie and CSRF header are checked in a tRPC middleware (the
// place tRPC gives to auth), with the gateway's statuses (401 without a session, 403
// without its CSRF token), and the procedure returns its input. No input validator, as
// the gateway's echo has none; the identity function is tRPC's own way to take any input.
// isDev off, as in production: a refusal carries no stack trace.
import { TRPCError, initTRPC } from "@trpc/server";

/** `viewer`: a viewerSession() from viewer-session.mjs. The context is the request's headers. */
export function echoRouter(viewer) {
  const t = initTRPC.context().create({ isDev: false });
  const sessionBound = t.procedure.use(({ ctx, next }) => {
    const status = viewer.refusal(ctx.headers);
    if (status === 401) throw new TRPCError({ code: "UNAUTHORIZED", message: "A valid session is required" });
    if (status === 403) throw new TRPCError({ code: "FORBIDDEN", message: "Missing or invalid CSRF token" });
    return next();
  });
  return t.router({
    echo: sessionBound.input((input) => input).mutation(({ input }) => input),
  });
}
