// Demo only: a public method that hands any caller a short-lived JWT for the
// `demo-secure` proxy, standing in for a real login service. A real app never mints
// tokens for anonymous callers; its identity provider does, after a real login.
//
// Browser side (docs/guides/proxy.md "Pairing with the browser `HttpClient`"):
//   const { token } = await xserver.module["upstream-demo"].issueDemoToken({ user: "ada" });
//   AppUser.setSecret(token, "jwt", "demo-secure");
//   const client = new HttpClient({ proxy: "demo-secure",
//     auth: { contextId: "demo-secure", types: ["jwt"], required: true } });
//   await client.request("/me");

export const policy = {
  issueDemoToken: { auth: { public: true }, runtime: { maxBodyBytes: 4096, timeoutMs: 5000 } },
};

const USER_NAME = /^[A-Za-z0-9_.@-]{1,64}$/;

/** `{ user? }` → `{ token, type, contextId, expiresAt }`; the token lives `tokenTtlSec` (default 600 s). */
export async function issueDemoToken(ctx, input = {}) {
  const { jwtSecret, issuer, audience, tokenTtlSec = 600 } = ctx.config;
  const user = typeof input?.user === "string" && USER_NAME.test(input.user) ? input.user : "demo-user";
  const expiresAt = Math.floor(Date.now() / 1000) + Number(tokenTtlSec);
  // jose is loaded by the first call, not with the server: most runs of the demo never ask
  // for a token, and jose holds about 2 MB of memory once loaded.
  const { SignJWT } = await import("jose");
  const token = await new SignJWT({ name: user, demo: true })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(user)
    .setIssuer(issuer)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime(expiresAt)
    .sign(new TextEncoder().encode(jwtSecret));
  return { token, type: "jwt", contextId: "demo-secure", expiresAt };
}
