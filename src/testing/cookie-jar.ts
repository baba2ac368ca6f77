/**
 * The one cookie store a test client needs: the cookies of one server, by name. Path,
 * domain and flags are not matched, since a test talks to one server at its root.
 */

/** What a browser keeps of Set-Cookie: name and value, removed on `Max-Age=0` or an expiry in the past. */
export function keepCookies(jar: Map<string, string>, header: string | string[] | undefined): void {
  for (const line of header === undefined ? [] : Array.isArray(header) ? header : [header]) {
    const [pair = "", ...attributes] = line.split(";");
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    const name = pair.slice(0, at).trim();
    const attribute = (wanted: string) => {
      for (const part of attributes) {
        const eq = part.indexOf("=");
        if (eq !== -1 && part.slice(0, eq).trim().toLowerCase() === wanted) return part.slice(eq + 1).trim();
      }
      return undefined;
    };
    // Max-Age wins over Expires (RFC 6265 5.3, step 3).
    const maxAge = attribute("max-age");
    const expires = attribute("expires");
    const expired = maxAge !== undefined ? Number(maxAge) <= 0 : expires !== undefined && Date.parse(expires) <= Date.now();
    if (expired) jar.delete(name);
    else jar.set(name, pair.slice(at + 1).trim());
  }
}
