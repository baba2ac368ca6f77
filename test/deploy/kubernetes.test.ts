// docs/guides/deployment.md "Kubernetes": the manifests of deploy/kubernetes/ name real things.
// They are parsed, not applied (there is no cluster here): selectors match the pods they
// mean, ports and probes name the container's port, every variable set is one the server
// or its mounted config reads, the Secret is the one the Deployment reads, the drain fits
// in the grace period; and the server, started as the Deployment starts it, answers every
// probe path 200.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { describe, expect, it } from "vitest";
import { send } from "../helpers/http.js";
import { REPO, runToExit, startEntrypoint } from "../helpers/process.js";
import { describeWithRedis, useRedis } from "../helpers/redis.js";
import { KUBERNETES_DIR, configVariables, helpFlags, readManifests, serverVariables, type KubernetesObject } from "./deploy-files.js";

const manifests = readManifests();
const objects = [...manifests.values()].flat();

function one(kind: string, name: string): KubernetesObject {
  const found = objects.filter((object) => object.kind === kind && object.metadata.name === name);
  expect(found, `${kind} ${name}`).toHaveLength(1);
  return found[0]!;
}

const deployment = one("Deployment", "counterpart");
const pod = deployment.spec.template;
const container = pod.spec.containers.find((item: { name: string }) => item.name === "counterpart");
const secret = one("Secret", "counterpart-session");
const configMap = one("ConfigMap", "counterpart-config");
const redis = one("Deployment", "counterpart-redis");
const redisService = one("Service", "counterpart-redis");

type EnvEntry = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
const envEntries: EnvEntry[] = container.env ?? [];
const envValue = (name: string) => envEntries.find((entry) => entry.name === name)?.value;

/** `selector` picks the pods labelled `labels` (every key of it, with its value). */
const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([key, value]) => labels[key] === value);

/** The mounted config file where APP_CONFIG points: the ConfigMap key under a configMap volume's mount. */
function mountedConfig(): { text: string; key: string } {
  const path = envValue("APP_CONFIG");
  expect(path, "APP_CONFIG").toBeDefined();
  const volume = pod.spec.volumes.find((item: { configMap?: { name: string } }) => item.configMap?.name === configMap.metadata.name);
  expect(volume, "a volume of the ConfigMap").toBeDefined();
  const mount = container.volumeMounts.find((item: { name: string }) => item.name === volume.name);
  expect(mount, "the ConfigMap volume mounted").toBeDefined();
  const key = mount.subPath ?? posix.relative(mount.mountPath, path!);
  expect(mount.subPath ? mount.mountPath : posix.join(mount.mountPath, key)).toBe(path);
  expect(Object.keys(configMap.data)).toContain(key);
  return { text: configMap.data[key], key };
}

/**
 * The container's environment for a run here: the manifest's values, a fresh secret for
 * the Secret's key, and the given overrides (the address, the port, the file paths and the
 * Redis of this machine instead of the cluster's).
 */
function containerEnv(overrides: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of envEntries) {
    if (entry.value !== undefined) env[entry.name] = entry.value;
    else if (entry.valueFrom?.secretKeyRef?.key === "APP_SESSION_SECRET") env[entry.name] = randomBytes(48).toString("base64");
    else throw new Error(`no value for ${entry.name} here`);
  }
  return { ...env, ...overrides };
}

function configFileHere(): string {
  const file = join(mkdtempSync(join(tmpdir(), "counterpart-k8s-")), "app.config.json");
  writeFileSync(file, mountedConfig().text);
  return file;
}

/** The probes' HTTP paths, by probe. */
function probePaths(): Map<string, string> {
  const paths = new Map<string, string>();
  for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
    const path = container[probe]?.httpGet?.path;
    if (path !== undefined) paths.set(probe, path);
  }
  return paths;
}

describe("deploy/kubernetes", () => {
  it("kustomization.yaml lists every manifest but the Secret's placeholder, and nothing else", () => {
    const [kustomization] = manifests.get("kustomization.yaml")!;
    const others = [...manifests.keys()].filter((name) => name !== "kustomization.yaml" && name !== "secret.yaml");
    expect([...kustomization!.resources].sort()).toEqual(others.sort());
    expect(kustomization!.resources).not.toContain("secret.yaml");
  });

  it("selects the pods each object means: Service, PodDisruptionBudget, NetworkPolicy", () => {
    const appLabels = pod.metadata.labels;
    const redisLabels = redis.spec.template.metadata.labels;
    expect(selects(deployment.spec.selector.matchLabels, appLabels)).toBe(true);
    expect(selects(redis.spec.selector.matchLabels, redisLabels)).toBe(true);
    const service = one("Service", "counterpart");
    expect(selects(service.spec.selector, appLabels)).toBe(true);
    expect(selects(service.spec.selector, redisLabels)).toBe(false);
    expect(selects(redisService.spec.selector, redisLabels)).toBe(true);
    expect(selects(redisService.spec.selector, appLabels)).toBe(false);
    expect(selects(one("PodDisruptionBudget", "counterpart").spec.selector.matchLabels, appLabels)).toBe(true);
    const policy = one("NetworkPolicy", "counterpart-redis");
    expect(selects(policy.spec.podSelector.matchLabels, redisLabels)).toBe(true);
    expect(policy.spec.ingress.flatMap((rule: any) => rule.from.map((peer: any) => selects(peer.podSelector.matchLabels, appLabels)))).toEqual([true]);
  });

  it("listens on APP_PORT of every interface, the port the probes and the Service name", () => {
    expect(envValue("APP_HOST")).toBe("0.0.0.0");
    expect(container.ports).toHaveLength(1);
    const port = container.ports[0];
    expect(port.containerPort).toBe(Number(envValue("APP_PORT")));
    const names = (target: unknown) => target === port.name || target === port.containerPort;
    for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) expect(names(container[probe].httpGet.port), probe).toBe(true);
    expect(one("Service", "counterpart").spec.ports.map((item: { targetPort: unknown }) => names(item.targetPort))).toEqual([true]);
    const redisPort = redis.spec.template.spec.containers[0].ports[0];
    expect(redisService.spec.ports.map((item: { targetPort: unknown }) => item.targetPort === redisPort.name || item.targetPort === redisPort.containerPort)).toEqual([true]);
  });

  it("sets only variables the server reads or its mounted config names, and every one the config names", () => {
    const config = JSON.parse(mountedConfig().text) as unknown;
    const referenced = configVariables(config);
    const known = serverVariables();
    const set = envEntries.map((entry) => entry.name);
    expect(set.filter((name) => !known.has(name) && !referenced.has(name))).toEqual([]);
    expect([...referenced].filter((name) => !set.includes(name))).toEqual([]);
    // What the README lists is what the built server reads.
    const code = ["cli/options.js", "app/create-server.js", "auth/session.js", "cluster/options.js"].map((file) => readFileSync(join(REPO, "dist", file), "utf8")).join("\n");
    for (const name of set.filter((item) => known.has(item))) expect(code, name).toContain(name);
  });

  it("takes APP_SESSION_SECRET from the Secret, whose only key it is", () => {
    expect(Object.keys({ ...secret.stringData, ...secret.data })).toEqual(["APP_SESSION_SECRET"]);
    const entry = envEntries.find((item) => item.name === "APP_SESSION_SECRET");
    expect(entry?.valueFrom?.secretKeyRef).toEqual({ name: secret.metadata.name, key: "APP_SESSION_SECRET" });
  });

  it("the Secret's placeholder is one the server refuses to start with", async () => {
    const result = await runToExit([], containerEnv({ APP_HOST: "127.0.0.1", APP_PORT: "0", APP_CONFIG: configFileHere(), APP_SESSION_SECRET: secret.stringData.APP_SESSION_SECRET }));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^counterpart: APP_SESSION_SECRET must be at least 32 bytes long/);
  });

  it("passes only flags that `node index.js --help` lists, to the image's entrypoint", async () => {
    const command: string[] = container.command ?? ["node", "index.js"];
    expect(command[0]).toBe("node");
    expect(["index.js", "cluster-index.js"]).toContain(command[1]);
    const help = await runToExit(["--help"], {}, 15_000, command[1]);
    expect(help.code).toBe(0);
    const flags = helpFlags(help.stdout);
    expect(flags.has("--port")).toBe(true);
    const given = [...command.slice(2), ...(container.args ?? [])].filter((word: string) => word.startsWith("--")).map((word: string) => word.split("=")[0]);
    expect(given.filter((flag: string) => !flags.has(flag))).toEqual([]);
  });

  it("points REDIS_URL at the Redis Service", () => {
    const url = new URL(envValue("REDIS_URL")!);
    expect(url.protocol).toBe("redis:");
    expect(url.hostname).toBe(redisService.metadata.name);
    expect(redisService.spec.ports.map((item: { port: number }) => item.port)).toContain(Number(url.port || 6379));
  });

  it("gives the drain its time: the grace period outlasts the preStop sleep plus server.shutdownTimeoutMs", () => {
    const sleep = pod.spec.containers[0].lifecycle.preStop.exec.command as string[];
    expect(sleep[0]).toBe("sleep");
    const preStopSec = Number(sleep[1]);
    expect(preStopSec).toBeGreaterThanOrEqual(5);
    const config = JSON.parse(mountedConfig().text) as { server?: { shutdownTimeoutMs?: number } };
    const shutdownSec = (config.server?.shutdownTimeoutMs ?? 10_000) / 1000;
    expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThan(preStopSec + shutdownSec);
    // Ready and live on different routes: liveness must stay 200 through a drain.
    expect(probePaths().get("readinessProbe")).not.toBe(probePaths().get("livenessProbe"));
  });

  it("runs as a user that is not root, with requests and limits", () => {
    for (const workload of [deployment, redis]) {
      const spec = workload.spec.template.spec;
      expect(spec.securityContext.runAsNonRoot).toBe(true);
      expect(spec.securityContext.runAsUser).toBeGreaterThan(0);
      for (const item of spec.containers) {
        expect(item.securityContext.allowPrivilegeEscalation).toBe(false);
        expect(item.resources.requests.memory).toBeDefined();
        expect(item.resources.limits.memory).toBeDefined();
      }
    }
  });

  it("reads deploy/kubernetes/ from the repository", () => {
    expect(KUBERNETES_DIR.startsWith(REPO)).toBe(true);
    expect(manifests.size).toBeGreaterThanOrEqual(6);
  });
});

describeWithRedis("the server started as the Deployment starts it", () => {
  const redisServer = useRedis();

  it("answers every probe path 200 once ready", async () => {
    // The Deployment's environment, but on this machine: loopback, port 0, the ConfigMap's
    // file in a temp folder, a local Redis, and the demo's upstream on a free port.
    const env = containerEnv({ APP_HOST: "127.0.0.1", APP_PORT: "0", APP_CONFIG: configFileHere(), REDIS_URL: redisServer.url, DEMO_UPSTREAM_PORT: "0" });
    const run = await startEntrypoint([], env, "index.js");
    try {
      const paths = probePaths();
      expect([...paths.keys()].sort()).toEqual(["livenessProbe", "readinessProbe", "startupProbe"]);
      for (const [probe, path] of paths) {
        const answer = await send(run.url, path);
        expect([probe, path, answer.status]).toEqual([probe, path, 200]);
      }
      expect((await send(run.url, paths.get("readinessProbe")!)).json).toEqual({ status: "ready" });
    } finally {
      await run.stop("SIGKILL");
    }
  });
});
