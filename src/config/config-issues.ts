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
  /** `invalid_union`: each option's own issues, paths relative to the union. */
  readonly errors?: ReadonlyArray<readonly SchemaIssue[]>;
  readonly expected?: string;
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
    if (issue.code === "invalid_union" && issue.errors) {
      const described = describeUnion(issue.errors);
      if (described) return described.flatMap((inner) => describeIssues(schema, [{ ...inner, path: [...issue.path, ...inner.path] }], base));
    }
    // "Invalid input: expected number, received string" says no more than its second half.
    return [`${at(issue.path)}: ${issue.message.replace(/^Invalid input: (?=.)/, "")}`];
  });
}

/**
 * zod answers a value no option of a union took with a bare "Invalid input". An option whose
 * only issue is the value's type at its root is not what the author meant: when one option
 * is left, its own issues say what is wrong (`rateLimit.key: Invalid option`); when none
 * is, one line names the types that would do. Undefined: several options remain.
 */
function describeUnion(options: ReadonlyArray<readonly SchemaIssue[]>): readonly SchemaIssue[] | undefined {
  const wrongType = (issues: readonly SchemaIssue[]) => issues.length === 1 && issues[0]!.code === "invalid_type" && issues[0]!.path.length === 0;
  const meant = options.filter((issues) => !wrongType(issues));
  if (meant.length === 1) return meant[0];
  if (meant.length > 0) return undefined;
  const expected = [...new Set(options.map((issues) => issues[0]!.expected).filter((type) => type !== undefined))];
  const received = /received (\w+)/.exec(options[0]?.[0]?.message ?? "")?.[1];
  return [{ code: "invalid_type", path: [], message: `expected ${expected.join(" or ")}${received ? `, received ${received}` : ""}` }];
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
