/**
 * The browser's half of the upload wire format (docs/guides/files.md): every
 * `Blob` (a `File` too) anywhere in a call's input is replaced by `{"$file": n}` and sent
 * as the multipart part `file:<n>`, beside the part `args` holding the JSON body. An input
 * without a Blob is sent as JSON, as ever.
 */

/** The input with its Blobs replaced by placeholders, and the Blobs in order; null when it holds none. */
export function extractBlobs(input: unknown): { input: unknown; blobs: Blob[] } | null {
  if (typeof Blob === "undefined") return null;
  const blobs: Blob[] = [];
  let sawPlaceholder = false;
  const walk = (value: unknown, depth: number): unknown => {
    if (value instanceof Blob) {
      blobs.push(value);
      return { $file: blobs.length - 1 };
    }
    // Past the server's own depth limit there is nothing worth walking: the call is refused anyway.
    if (value === null || typeof value !== "object" || depth > 64) return value;
    if (Array.isArray(value)) {
      const before = blobs.length;
      const copy = value.map((item) => walk(item, depth + 1));
      return blobs.length === before ? value : copy;
    }
    // Only plain objects: a Date, a Map or a class instance is left to JSON, as without files.
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return value;
    const keys = Object.keys(value);
    // On the wire that object is a placeholder: sent beside files it would be taken for one.
    if (keys.length === 1 && keys[0] === "$file") sawPlaceholder = true;
    const before = blobs.length;
    const copy: Record<string, unknown> = {};
    for (const key of keys) {
      Object.defineProperty(copy, key, { value: walk((value as Record<string, unknown>)[key], depth + 1), enumerable: true, writable: true, configurable: true });
    }
    return blobs.length === before ? value : copy;
  };
  const replaced = walk(input, 0);
  if (blobs.length === 0) return null;
  if (sawPlaceholder) throw new TypeError('xserver: an input with files cannot also hold an object whose only key is "$file" (the upload placeholder)');
  return { input: replaced, blobs };
}

/** The multipart body: `args` first (the server reads it whole), then each file part. */
export function uploadForm(body: unknown, blobs: readonly Blob[]): FormData {
  const form = new FormData();
  form.append("args", JSON.stringify(body));
  blobs.forEach((blob, index) => {
    const name = typeof File !== "undefined" && blob instanceof File ? blob.name : "blob";
    form.append(`file:${index}`, blob, name);
  });
  return form;
}
