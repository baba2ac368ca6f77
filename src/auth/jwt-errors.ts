/**
 * One small class per way a bearer token can fail (Hono style), so callers and tests tell
 * failures apart without matching message text. They go to the log only: a client is
 * told 401 and nothing about why.
 */
export class JwtError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

export class JwtMissingError extends JwtError {
  constructor() {
    super("JWT_MISSING", "no Authorization: Bearer token");
  }
}

export class JwtMalformedError extends JwtError {
  constructor(reason: string, options?: { cause?: unknown }) {
    super("JWT_MALFORMED", `malformed token: ${reason}`, options);
  }
}

export class JwtAlgorithmError extends JwtError {
  constructor(options?: { cause?: unknown }) {
    super("JWT_ALGORITHM", "token algorithm is not HS256", options);
  }
}

export class JwtTypeError extends JwtError {
  constructor(options?: { cause?: unknown }) {
    super("JWT_TYPE", "token typ header is not JWT", options);
  }
}

export class JwtSignatureError extends JwtError {
  constructor(options?: { cause?: unknown }) {
    super("JWT_SIGNATURE", "token signature does not match", options);
  }
}

export class JwtExpiredError extends JwtError {
  constructor(options?: { cause?: unknown }) {
    super("JWT_EXPIRED", "token has expired", options);
  }
}

export class JwtNotYetValidError extends JwtError {
  constructor(options?: { cause?: unknown }) {
    super("JWT_NOT_YET_VALID", "token is not valid yet (nbf)", options);
  }
}

export class JwtClaimError extends JwtError {
  readonly claim: string;

  constructor(claim: string, reason: string, options?: { cause?: unknown }) {
    super("JWT_CLAIM", `claim ${claim}: ${reason}`, options);
    this.claim = claim;
  }
}

/**
 * Maps a jose failure onto the classes above, by jose's stable error codes (so jose
 * itself is only loaded once a token is checked).
 */
export function fromJoseError(error: unknown): JwtError {
  if (error instanceof JwtError) return error;
  const cause = { cause: error };
  const code = (error as { code?: unknown })?.code;
  const claim = (error as { claim?: unknown })?.claim;
  const message = (error as Error)?.message ?? String(error);
  switch (code) {
    case "ERR_JWT_EXPIRED":
      return new JwtExpiredError(cause);
    case "ERR_JWT_CLAIM_VALIDATION_FAILED":
      if (claim === "typ") return new JwtTypeError(cause);
      if (claim === "nbf") return new JwtNotYetValidError(cause);
      return new JwtClaimError(String(claim), message, cause);
    case "ERR_JOSE_ALG_NOT_ALLOWED":
      return new JwtAlgorithmError(cause);
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return new JwtSignatureError(cause);
    default:
      return new JwtMalformedError(message, cause);
  }
}
