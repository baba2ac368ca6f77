/**
 * Reading the deployment files the way Docker and kubectl read them, for the tests beside
 * this file: the Dockerfile's stages and instructions, the YAML documents of
 * deploy/kubernetes/, and what the server itself says it reads (flags, variables, routes),
 * so that the tests can hold one against the other. Docker is not run: no image is built.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { REPO } from "../helpers/process.js";

export const KUBERNETES_DIR = join(REPO, "deploy/kubernetes");

export interface Instruction {
  /** Upper case: `FROM`, `RUN`, `COPY`, … */
  keyword: string;
  /** Everything after the keyword, continuation lines joined. */
  args: string;
  line: number;
}

export interface Stage {
  name: string | null;
  from: string;
  instructions: Instruction[];
}

/**
 * The Dockerfile's instructions, grouped by stage (ARGs before the first FROM are left
 * out). Comments and blank lines are skipped, `\` continuations joined, as Docker does.
 */
export function readDockerfile(text = readFileSync(join(REPO, "Dockerfile"), "utf8")): Stage[] {
  const instructions: Instruction[] = [];
  let pending: { text: string; line: number } | null = null;
  text.split("\n").forEach((raw, index) => {
    const line = raw.trimEnd();
    if (/^\s*#/.test(line) || (pending === null && line.trim() === "")) return;
    const continued = line.endsWith("\\");
    const part = continued ? line.slice(0, -1) : line;
    pending = pending ? { text: `${pending.text} ${part.trim()}`, line: pending.line } : { text: part.trim(), line: index + 1 };
    if (continued) return;
    const match = /^(\S+)\s*(.*)$/.exec(pending.text)!;
    instructions.push({ keyword: match[1]!.toUpperCase(), args: match[2]!.trim(), line: pending.line });
    pending = null;
  });
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === "FROM") {
      const [from, as, name] = instruction.args.split(/\s+/);
      stages.push({ from: from!, name: as?.toUpperCase() === "AS" ? name! : null, instructions: [] });
    } else stages.at(-1)?.instructions.push(instruction);
  }
  return stages;
}

/** `["node", "index.js"]` for an exec-form instruction, null for a shell-form one. */
export function execForm(args: string): string[] | null {
  if (!args.startsWith("[")) return null;
  const parsed: unknown = JSON.parse(args);
  return Array.isArray(parsed) && parsed.every((item) => typeof item === "string") ? parsed : null;
}

/** `ENV A=1 B=2` (and the old `ENV A 1`) as a map. */
export function envOf(stage: Stage): Map<string, string> {
  const env = new Map<string, string>();
  for (const { keyword, args } of stage.instructions) {
    if (keyword !== "ENV") continue;
    if (!args.includes("=")) {
      const [name, ...value] = args.split(/\s+/);
      env.set(name!, value.join(" "));
      continue;
    }
    for (const match of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g)) env.set(match[1]!, match[2]!.replace(/^"|"$/g, ""));
  }
  return env;
}

export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [field: string]: any;
}

/** Every YAML document of every file in deploy/kubernetes/, by file; a syntax error fails loudly. */
export function readManifests(): Map<string, KubernetesObject[]> {
  const files = new Map<string, KubernetesObject[]>();
  for (const name of readdirSync(KUBERNETES_DIR).filter((file) => file.endsWith(".yaml")).sort()) {
    const documents = parseAllDocuments(readFileSync(join(KUBERNETES_DIR, name), "utf8"));
    files.set(
      name,
      documents.map((document) => {
        if (document.errors.length > 0) throw new Error(`${name}: ${document.errors.map((error) => error.message).join("; ")}`);
        return document.toJS() as KubernetesObject;
      }),
    );
  }
  return files;
}

/**
 * The variables the server reads, as docs/reference/cli.md lists them (its flag table's
 * Environment column), with `APP_WORKERS` of `cluster-index.js` (docs/guides/deployment.md).
 */
export function serverVariables(): Set<string> {
  const cli = readFileSync(join(REPO, "docs/reference/cli.md"), "utf8");
  const start = cli.indexOf("| Flag | Environment | Default |");
  const table = cli.slice(start, cli.indexOf("\n\n", start));
  const names = [...table.matchAll(/^\|[^|]*\| `([A-Z][A-Z0-9_]*)(?:=[^`]*)?` \|/gm)].map((match) => match[1]!);
  const deployment = readFileSync(join(REPO, "docs/guides/deployment.md"), "utf8");
  if (deployment.includes("`APP_WORKERS`")) names.push("APP_WORKERS");
  return new Set(names);
}

/** The variables a config file names: `"<% NAME %>"` (with or without a default) and `secretEnv` values. */
export function configVariables(config: unknown): Set<string> {
  const names = new Set<string>();
  const visit = (value: unknown, key: string | null): void => {
    if (typeof value === "string") {
      for (const match of value.matchAll(/<%\s*([A-Za-z_][A-Za-z0-9_]*)/g)) names.add(match[1]!);
      if (key === "secretEnv") names.add(value);
    } else if (Array.isArray(value)) value.forEach((item) => visit(item, null));
    else if (value && typeof value === "object") for (const [field, item] of Object.entries(value)) visit(item, field);
  };
  visit(config, null);
  return names;
}

/** The flags `--help` lists for `entry`. */
export function helpFlags(helpText: string): Set<string> {
  return new Set([...helpText.matchAll(/^\s+(--[a-z][a-z-]*)/gm)].map((match) => match[1]!));
}
