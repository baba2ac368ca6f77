/**
 * `runtime.files.types` (docs/guides/files.md): MIME types or `type/*` patterns,
 * matched against a file part's Content-Type without its parameters, case-insensitively.
 */

/** What a file part without a Content-Type counts as. */
export const DEFAULT_FILE_TYPE = "application/octet-stream";

export function fileTypeAllowed(type: string, allowed: readonly string[] | undefined): boolean {
  if (allowed === undefined) return true;
  const bare = (type.split(";", 1)[0] ?? "").trim().toLowerCase();
  const major = bare.slice(0, bare.indexOf("/") + 1);
  for (const pattern of allowed) {
    const wanted = pattern.toLowerCase();
    if (wanted === bare || (wanted.endsWith("/*") && major !== "" && wanted.slice(0, -1) === major)) return true;
  }
  return false;
}
