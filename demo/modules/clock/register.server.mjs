// Boot hook: runs once before the server listens. It registers the `demoKey` verifier that
// the "partner" context of app.config.json names.
import { timingSafeEqual } from "node:crypto";

export function register(api) {
  const expected = Buffer.from(String(api.config.partnerKey ?? ""));
  api.registerRpcAuthVerifier("demoKey", ({ req, verifierConfig }) => {
    const given = Buffer.from(String(req.headers[verifierConfig.header] ?? ""));
    const ok = expected.length > 0 && given.length === expected.length && timingSafeEqual(given, expected);
    return ok ? { ok: true, user: { sub: "partner" } } : false;
  });
}
