// The RPC echo as an oRPC 1.x user writes it, shared by the oRPC servers: the session
// cookie and CSRF header are checked in an oRPC middleware, with the gateway's statuses
// (401 without a session, 403 without its CSRF token), and the procedure returns its
// input (no input schema, as the gateway's echo has none). The `.route()` line is only
// read by the OpenAPI handler, which needs a method and path per procedure.
import { ORPCError, os } from "@orpc/server";

/** `viewer`: a viewerSession() from viewer-session.mjs. The context is `{ headers }`. */
export function echoRouter(viewer) {
  const sessionBound = os.$context().use(({ context, next }) => {
    const status = viewer.refusal(context.headers);
    if (status === 401) throw new ORPCError("UNAUTHORIZED", { message: "A valid session is required" });
    if (status === 403) throw new ORPCError("FORBIDDEN", { message: "Missing or invalid CSRF token" });
    return next();
  });
  return {
    echo: sessionBound.route({ method: "POST", path: "/echo" }).handler(({ input }) => input),
  };
}
