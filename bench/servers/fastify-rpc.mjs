// The Fastify baseline for the gateway benchmark: a bare Fastify 5 route doing exactly the
// work of raw-rpc.mjs — session cookie signature check and CSRF header check before the
// body is read, Fastify's own JSON parse of the body, a JSON answer — with Fastify's
// defaults otherwise (no logger, as raw-rpc writes no log). The gateway's CPU per call is
// judged against this route: it is what the same checks cost on the framework the gateway
// is built on, so the difference is the gateway's own routing, policy and logging.
import Fastify from "fastify";
import { SessionSigner } from "../../dist/auth/session.js";

const signer = new SessionSigner(process.env.APP_SESSION_SECRET, 3600);
const { token, session } = signer.issue();
const csrf = signer.csrfToken(session);

const app = Fastify({ logger: false });

const viewerPage = (_req, reply) => {
  reply.header("set-cookie", `app_session=${token}; Path=/`).type("text/html");
  return `<script>window.APP_CSRF_TOKEN = "${csrf}";</script>`;
};
app.get("/", viewerPage);
app.get("/health", viewerPage);

app.post("/rpc", {
  // onRequest runs before the body is read, where raw-rpc.mjs checks too: a refused call
  // never pays for its body.
  onRequest(req, reply, done) {
    const cookie = /(?:^|;\s*)app_session=([^;]+)/.exec(req.headers.cookie ?? "")?.[1];
    const current = signer.verify(cookie);
    if (!current || !signer.checkCsrf(current, req.headers["x-app-csrf"])) {
      reply.code(401).send({});
      return;
    }
    done();
  },
  handler(req) {
    return { result: req.body.args[0] };
  },
});

await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1" });
