/**
 * The body of a call that carries files (docs/guides/files.md, wire format):
 * `multipart/form-data` with one field `args` (the JSON body of any call) and file parts
 * named `file:<n>`, each put where `args` holds the placeholder `{"$file": <n>}`. Parsed as
 * it arrives by @fastify/busboy; every file goes to the call's CallFiles (memory, then its
 * temporary folder). Refused as early as the parser can tell: too large a file, too many,
 * a type outside `types`, a body over `maxBodyBytes`. Placeholders are resolved only
 * here: a JSON body holding `{"$file": 0}` is that object, nothing more.
 * `args` comes first: the verifiers run on it (`admit`) before a byte of a file is read,
 * so a caller they refuse never has its upload written anywhere. The method starts once
 * the last part is in.
 */
import type { IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import type { Busboy as BusboyClass, BusboyFileStream } from "@fastify/busboy";
import { errorOf } from "../errors/http-error.js";
import type { ResolvedPolicy } from "../discovery/policy.js";
import type { CallLifetime } from "../runtime/call-lifetime.js";
import type { CallFiles } from "../runtime/call-files.js";
import { endedRead, parseRpcBody, readBoundedBody, type RpcBody } from "./body.js";
import { DEFAULT_FILE_TYPE, fileTypeAllowed } from "./file-types.js";

const FILE_PART = /^file:(0|[1-9]\d{0,5})$/;

/**
 * The parser, loaded by the first multipart call: a server whose methods take no files
 * never holds it (docs/reference/benchmarks.md "Memory"). Its package is CommonJS.
 */
let Busboy: typeof BusboyClass | undefined;

export function isMultipart(contentType: string | undefined): boolean {
  return contentType !== undefined && /^\s*multipart\/form-data\s*(?:;|$)/i.test(contentType);
}

/**
 * The call's body, JSON or multipart. A method without `runtime.files` takes no
 * multipart (415); with it, a JSON body is still bounded by the server's JSON limit, not
 * by the files' `maxBodyBytes`.
 */
/** Checks a multipart call's body as soon as its `args` part is in; resolves once admitted. */
export type Admit = (body: RpcBody) => Promise<unknown> | null;

export function readCallBody(req: IncomingMessage, policy: ResolvedPolicy, lifetime: CallLifetime, files: CallFiles, admit: Admit): Promise<RpcBody> {
  const multipart = isMultipart(req.headers["content-type"]);
  if (multipart && !policy.files) return Promise.reject(errorOf("RPC_FILES_NOT_ACCEPTED"));
  if (!multipart) return readBoundedBody(req, policy.files ? policy.files.argsMaxBytes : policy.maxBodyBytes, lifetime).then(parseRpcBody);
  return readMultipartBody(req, policy, lifetime, files, admit);
}

function badMultipart(reason: string, message: string) {
  return errorOf("RPC_BAD_REQUEST", { reason }, message);
}

function readMultipartBody(req: IncomingMessage, policy: ResolvedPolicy, lifetime: CallLifetime, files: CallFiles, admit: Admit): Promise<RpcBody> {
  const limits = policy.files!;
  const maxBodyBytes = policy.maxBodyBytes;
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > maxBodyBytes) return Promise.reject(errorOf("RPC_PAYLOAD_TOO_LARGE", { limit: maxBodyBytes }));
  if (lifetime.ended || req.destroyed) return Promise.reject(endedRead(lifetime.reason));
  let parser: InstanceType<typeof BusboyClass>;
  try {
    Busboy ??= (createRequire(import.meta.url)("@fastify/busboy") as { Busboy: typeof BusboyClass }).Busboy;
    parser = new Busboy({
      headers: req.headers as { "content-type": string },
      limits: {
        fieldNameSize: 16,
        fieldSize: limits.argsMaxBytes,
        fields: 1,
        files: limits.maxFiles,
        fileSize: limits.maxFileBytes,
        // One more than args and the files: a file too many is told as such, not as a part too many.
        parts: limits.maxFiles + 2,
        headerPairs: 16,
      },
      // Which parts are files is the part's name, not whether the client sent a filename.
      isPartAFile: (name) => name !== "args",
    });
  } catch {
    return Promise.reject(badMultipart("bad-multipart", "Malformed multipart body"));
  }
  return new Promise<RpcBody>((resolve, reject) => {
    let size = 0;
    let body: RpcBody | undefined;
    // Settles once the verifiers are done with `args`; file parts wait for it.
    let admission: Promise<unknown> | undefined;
    let failed = false;
    const parts: BusboyFileStream[] = [];
    const seen = new Set<number>();
    const spooling: Array<Promise<void>> = [];
    // Whether the part being parsed had a Content-Type: busboy calls a missing one
    // text/plain (RFC 7578), the contract says application/octet-stream. Its part parser
    // runs our header listener first, and emits "file" synchronously right after.
    let partHadType = true;
    const partParser = (parser as unknown as { _parser?: { parser?: import("node:events").EventEmitter } })._parser?.parser;
    partParser?.on("part", (part: import("node:events").EventEmitter) => {
      part.prependListener("header", (header: Record<string, unknown>) => {
        partHadType = header["content-type"] !== undefined;
      });
    });

    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      parser.off("drain", onDrain);
      lifetime.offEnd(onEnded);
    };
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      cleanup();
      // Nothing more is parsed: the parts still open are dropped with what they hold, and
      // the rest of the body is left to the lingering close of the refusal.
      for (const part of parts) part.destroy();
      parser.removeAllListeners();
      parser.on("error", () => {});
      req.pause();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) return fail(errorOf("RPC_PAYLOAD_TOO_LARGE", { limit: maxBodyBytes }));
      if (!parser.write(chunk)) req.pause();
    };
    const onDrain = () => {
      if (!failed) req.resume();
    };
    const onEnd = () => parser.end();
    const onEnded = (reason: unknown) => fail(endedRead(reason));

    parser.on("field", (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
      if (name !== "args" || body !== undefined) return fail(badMultipart("bad-part", "A multipart call has one field, args, and file:<n> parts"));
      if (valueTruncated) return fail(errorOf("RPC_PAYLOAD_TOO_LARGE", { limit: limits.argsMaxBytes }));
      try {
        body = parseRpcBody(Buffer.from(value, "utf8"));
      } catch (error) {
        return fail(error);
      }
      admission = Promise.resolve(admit(body));
      admission.catch((error: unknown) => fail(error));
    });
    parser.on("file", (name: string, part: BusboyFileStream, filename: string | undefined, _encoding: string, mimeType: string) => {
      parts.push(part);
      if (!admission) return fail(badMultipart("args-first", "The args part comes before the file parts"));
      const match = FILE_PART.exec(name);
      const index = match ? Number(match[1]) : -1;
      if (index < 0 || index >= limits.maxFiles || seen.has(index)) {
        return fail(badMultipart("bad-file-part", "File parts are named file:<n>, each n once, below maxFiles"));
      }
      seen.add(index);
      const type = partHadType ? mimeType : DEFAULT_FILE_TYPE;
      if (!fileTypeAllowed(type, limits.types)) return fail(errorOf("RPC_BAD_FILE_TYPE", { type: type.slice(0, 100), accepted: limits.types }));
      part.on("limit", () => fail(errorOf("RPC_FILE_TOO_LARGE", { limit: limits.maxFileBytes })));
      // Not a byte is read before the call is admitted: the part's buffer fills, then the parser waits.
      const spool = admission.then(() => files.spool(index, filename ?? "", type, part));
      spool.catch((error: unknown) => fail(error));
      spooling.push(spool);
    });
    parser.on("filesLimit", () => fail(errorOf("RPC_TOO_MANY_FILES", { limit: limits.maxFiles })));
    parser.on("partsLimit", () => fail(badMultipart("too-many-parts", "Too many multipart parts")));
    parser.on("fieldsLimit", () => fail(badMultipart("bad-part", "A multipart call has one field, args, and file:<n> parts")));
    parser.on("error", () => fail(badMultipart("bad-multipart", "Malformed multipart body")));
    parser.on("finish", () => {
      Promise.all([admission, ...spooling]).then(
        () => {
          if (failed) return;
          cleanup();
          try {
            resolve(resolvePlaceholders(body, files));
          } catch (error) {
            failed = true;
            reject(error);
          }
        },
        (error: unknown) => fail(error),
      );
    });
    parser.on("drain", onDrain);
    req.on("data", onData);
    req.on("end", onEnd);
    lifetime.onEnd(onEnded);
  });
}

/** The `args` field parsed as any JSON body, each `{"$file": n}` replaced by file n. */
function resolvePlaceholders(body: RpcBody | undefined, files: CallFiles): RpcBody {
  if (body === undefined) throw badMultipart("no-args", "A multipart call needs its args field");
  const used = new Set<number>();
  const walk = (value: unknown, at: Array<string | number>): unknown => {
    if (value === null || typeof value !== "object") return value;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i += 1) value[i] = walk(value[i], [...at, i]);
      return value;
    }
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length === 1 && keys[0] === "$file") {
      const index = record.$file;
      const file = typeof index === "number" ? files.file(index) : undefined;
      if (!file || used.has(index as number)) throw badMultipart("bad-placeholder", "Each {\"$file\": n} names a file part sent once");
      used.add(index as number);
      files.place(at, file);
      return file;
    }
    for (const key of keys) record[key] = walk(record[key], [...at, key]);
    return record;
  };
  walk(body.args, []);
  for (const index of files.indices()) {
    if (!used.has(index)) throw badMultipart("unplaced-file", "Every file part is named by a placeholder in args");
  }
  return body;
}
