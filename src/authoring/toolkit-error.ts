/**
 * A failure of an author's command (`init`, `types`, `check`) that the author can fix: the
 * command line prints its message alone, without a stack, and exits 1.
 */
export class ToolkitError extends Error {
  override readonly name = "ToolkitError";
}
