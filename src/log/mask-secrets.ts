/**
 * Masks configured secret values in serialised log lines, wherever they stand (a message,
 * an error text, a custom field). Works on the JSON line, so a secret is looked for in its
 * JSON-escaped form too, and a secret made of digits is only replaced as a whole token —
 * never inside a longer number, which would leave the line invalid JSON.
 * Values shorter than MIN_SECRET_LENGTH are left alone: masking them would mangle
 * ordinary text (docs/reference/log-events.md).
 */
export const MIN_SECRET_LENGTH = 6;
const REDACTED = "[Redacted]";

/** Masks every configured secret in a JSON text (a log line or an answer body). */
export type SecretMask = (line: string) => string;

export function createSecretMasker(secrets: readonly string[]): SecretMask | null {
  const masks: SecretMask[] = [];
  // Longest first: a secret that holds a shorter one must be masked whole, not left with
  // its own text around the shorter one's mask.
  for (const secret of [...new Set(secrets)].sort((a, b) => b.length - a.length)) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (/^-?\d+(?:\.\d+)?$/.test(secret)) masks.push(numberMask(secret));
    else {
      masks.push(textMask(escaped));
      if (escaped !== secret) masks.push(textMask(secret));
    }
  }
  if (masks.length === 0) return null;
  // Runs on every log line: a plain loop, no closure per line.
  return (line) => {
    let out = line;
    for (const mask of masks) out = mask(out);
    return out;
  };
}

function textMask(needle: string): SecretMask {
  return (line) => (line.includes(needle) ? line.split(needle).join(REDACTED) : line);
}

function numberMask(secret: string): SecretMask {
  const pattern = new RegExp(`(?<![\\d.])${secret.replace(/[.\-]/g, "\\$&")}(?![\\d.eE])`, "g");
  return (line) =>
    line.includes(secret)
      ? line.replace(pattern, (match, offset: number) => {
          const before = line[offset - 1];
          const after = line[offset + match.length];
          // A bare JSON number (after ":", "," or "[") becomes a string, keeping the line valid.
          const bareNumber = (before === ":" || before === "," || before === "[") && (after === "," || after === "}" || after === "]");
          return bareNumber ? `"${REDACTED}"` : REDACTED;
        })
      : line;
}

/**
 * Masks an error answer's JSON body with the log's masker, so that a client never reads a
 * secret the log would hide (docs/reference/log-events.md). Costs a few `includes` when no secret is in
 * the body. A secret that holds JSON punctuation could leave the masked text invalid: the
 * body's values are then masked one by one, and a value that still cannot be masked
 * cleanly is replaced whole.
 */
export function maskJsonAnswer(json: string, mask: SecretMask): string {
  const masked = mask(json);
  if (masked === json) return json;
  try {
    JSON.parse(masked);
    return masked;
  } catch {
    return JSON.stringify(maskValue(JSON.parse(json), mask));
  }
}

function maskValue(value: unknown, mask: SecretMask): unknown {
  if (Array.isArray(value)) return value.map((item) => maskValue(item, mask));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      // defineProperty: a key such as `__proto__` stays a plain own key.
      Object.defineProperty(out, String(maskScalar(key, mask)), { value: maskValue(item, mask), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return typeof value === "string" || typeof value === "number" ? maskScalar(value, mask) : value;
}

function maskScalar(value: string | number, mask: SecretMask): unknown {
  const json = JSON.stringify(value);
  const masked = mask(json);
  if (masked === json) return value;
  try {
    return JSON.parse(masked) as unknown;
  } catch {
    return REDACTED;
  }
}
