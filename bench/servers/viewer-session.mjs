// What every baseline server of the benchmarks does for a session-bound request, the way
// the gateway must: hand out a session like the viewer page, then check the session
// cookie's signature and the CSRF header (the same SessionSigner) on each request.
import { SessionSigner } from "../../dist/auth/session.js";

export function viewerSession() {
  const signer = new SessionSigner(process.env.APP_SESSION_SECRET, 3600);
  const { token, session } = signer.issue();
  const csrf = signer.csrfToken(session);
  /**
   * 0 when `headers` carry the session and its CSRF token; else the status the gateway
   * answers with: 401 without a valid session, 403 without its CSRF token.
   */
  const refusal = (headers) => {
    const cookie = /(?:^|;\s*)app_session=([^;]+)/.exec(headers.cookie ?? "")?.[1];
    const current = signer.verify(cookie);
    if (!current) return 401;
    return signer.checkCsrf(current, headers["x-app-csrf"]) ? 0 : 403;
  };
  return {
    token,
    csrf,
    refusal,
    /** Answers like the viewer page: the session cookie and `window.APP_CSRF_TOKEN`. */
    servePage(res) {
      res.setHeader("set-cookie", `app_session=${token}; Path=/`);
      res.end(`<script>window.APP_CSRF_TOKEN = "${csrf}";</script>`);
    },
    /** The viewer page at `/` and `/health` of a Fastify app, as servePage answers it. */
    routePage(app) {
      const page = (_req, reply) => {
        reply.header("set-cookie", `app_session=${token}; Path=/`).type("text/html");
        return `<script>window.APP_CSRF_TOKEN = "${csrf}";</script>`;
      };
      app.get("/", page);
      app.get("/health", page);
    },
    /** True when the request carries the session and its CSRF token; else answers 401 and returns false. */
    passes(req, res) {
      if (refusal(req.headers) === 0) return true;
      res.statusCode = 401;
      res.end("{}");
      return false;
    },
  };
}
