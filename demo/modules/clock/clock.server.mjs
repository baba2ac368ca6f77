// A module with one method of each exposure.
export const policy = {
  now: { auth: { public: true } },
  // Verifier-only: no session; the call must name contextId "partner" and pass demoKey.
  partnerReport: { auth: { public: false, requireSession: false } },
};

/** Public. */
export function now() {
  return { iso: new Date().toISOString(), epochMs: Date.now() };
}

/** Session-only (no policy entry): needs the session cookie and the X-APP-CSRF header. */
export function whoami(ctx) {
  return { session: ctx.session?.id ?? null, viewerId: ctx.viewerId ?? null, requestId: ctx.requestId };
}

/** Verifier-only. */
export function partnerReport(ctx, input = {}) {
  return { for: ctx.user?.sub ?? null, contextId: ctx.contextId, days: Number(input.days ?? 7) };
}
