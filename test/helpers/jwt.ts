/** JWTs crafted by hand, so that every header and payload shape can be produced. */
import { createHmac } from "node:crypto";

/** base64url of bytes or a string as they are, or of anything else as JSON. */
export const b64url = (value: unknown): string =>
  Buffer.from(Buffer.isBuffer(value) || typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");

export function hs(algorithm: "sha256" | "sha384" | "sha512", secret: string, header: unknown, payload: unknown): string {
  const data = `${b64url(header)}.${b64url(payload)}`;
  return `${data}.${createHmac(algorithm, secret).update(data).digest("base64url")}`;
}

export const nowSec = (): number => Math.floor(Date.now() / 1000);
