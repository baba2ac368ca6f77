/** `host:port` of a Redis URL, for logs and status: the URL itself may carry a password. */
export function redisAddressOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || "127.0.0.1"}:${parsed.port || "6379"}`;
  } catch {
    return "(unparsable URL)";
  }
}
