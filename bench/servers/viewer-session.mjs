// What every baseline server of the benchmarks does for a session-bound request, the way
// the gateway must: hand out a session like the viewer page, then check the session
// cookie's signature and the CSRF header (the same SessionSigner) on each request.
import { SessionSigner } from "../../dist/auth/session.js";

export function viewerSession() {
  const signer = new SessionSigner(process.env.APP_SESSION_SECRET, 3600);
  const { token, session } = signer.issue();
  const csrf = signer.csrfToken(session);
  return {
    /** Answers like the viewer page: the session cookie and `window.APP_CSRF_TOKEN`. */
    servePage(res) {
      res.setHeader("set-cookie", `app_session=${token}; Path=/`);
      res.end(`<script>window.APP_CSRF_TOKEN = "${csrf}";</script>`);
    },
    /** True when the request carries the session and its CSRF token; else answers 401 and returns false. */
    passes(req, res) {
      const cookie = /(?:^|;\s*)app_session=([^;]+)/.exec(req.headers.cookie ?? "")?.[1];
      const current = signer.verify(cookie);
      if (current && signer.checkCsrf(current, req.headers["x-app-csrf"])) return true;
      res.statusCode = 401;
      res.end("{}");
      return false;
    },
  };
}
