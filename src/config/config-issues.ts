/**
 * Every problem zod finds in a config (or a policy), one line each with its key path first:
 * `server.rpc.timeoutMs: expected number, received string`. An unknown key gets the known
 * key of that object nearest to it (`server.sesion: unknown key; did you mean "session"?`),
 * found by walking the schema down the issue's path, so the suggestion always names a key
 * that is valid at that very place.
 */
import { closest } from "./did-you-mean.js";
import { formatPath } from "./substitute-env.js";

/** What zod reports; only the fields read here. */
export interface SchemaIssue {
  readonly code: string;
  readonly path: ReadonlyArray<PropertyKey>;
  readonly message: string;
  readonly keys?: readonly string[];
}

/** A zod (or zod/mini) schema, read through its definition only. */
interface SchemaNode {
  _zod: { def: Record<string, unknown> };
}

/**
 * One line per problem, each starting with its key path below `base` (a path that leads
 * into the schema, such as `policy.search`, or "" at the root).
 */
export function describeIssues(schema: unknown, issues: readonly SchemaIssue[], base = ""): string[] {
  const at = (path: ReadonlyArray<PropertyKey>) => {
    const rest = path.length === 0 ? "" : formatPath(path);
    return base === "" ? (rest === "" ? "(root)" : rest) : rest === "" ? base : `${base}.${rest}`;
  };
  return issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys" && issue.keys) {
      const allowed = objectKeysAt(schema as SchemaNode, issue.path);
      return issue.keys.map((key) => {
        const near = allowed === undefined ? undefined : closest(key, allowed);
        return `${at([...issue.path, key])}: unknown key${near === undefined ? "" : `; did you mean "${near}"?`}`;
      });
    }
    // "Invalid input: expected number, received string" says no more than its second half.
    return [`${at(issue.path)}: ${issue.message.replace(/^Invalid input: (?=.)/, "")}`];
  });
}

/** The keys the object schema found at `path` takes, or undefined when the path leads to no object. */
export function objectKeysAt(schema: SchemaNode, path: ReadonlyArray<PropertyKey>): string[] | undefined {
  let nodes = [schema];
  for (const segment of path) nodes = nodes.flatMap((node) => childrenAt(unwrap(node), segment));
  const keys = new Set<string>();
  let found = false;
  for (const node of nodes.flatMap(unwrap)) {
    const shape = node._zod.def.shape as Record<string, unknown> | undefined;
    if (node._zod.def.type !== "object" || shape === undefined) continue;
    found = true;
    for (const key of Object.keys(shape)) keys.add(key);
  }
  return found ? [...keys] : undefined;
}

/** The schemas a value may be checked by once wrappers (optional, default, pipe) and unions are looked through. */
function unwrap(node: SchemaNode): SchemaNode[] {
  const def = node._zod.def;
  switch (def.type) {
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "nonoptional":
    case "readonly":
    case "catch":
      return unwrap(def.innerType as SchemaNode);
    case "pipe":
      return unwrap(def.in as SchemaNode);
    case "lazy":
      return unwrap((def.getter as () => SchemaNode)());
    case "union":
      return (def.options as SchemaNode[]).flatMap(unwrap);
    default:
      return [node];
  }
}

function childrenAt(nodes: SchemaNode[], segment: PropertyKey): SchemaNode[] {
  return nodes.flatMap((node) => {
    const def = node._zod.def;
    if (def.type === "object") {
      const shape = def.shape as Record<string, SchemaNode>;
      return typeof segment === "string" && Object.hasOwn(shape, segment) ? [shape[segment]!] : [];
    }
    if (def.type === "record") return [def.valueType as SchemaNode];
    if (def.type === "array") return [def.element as SchemaNode];
    return [];
  });
}
