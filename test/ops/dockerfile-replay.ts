import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { parseDockerfile, type DockerStage } from "./dockerfile-parse.ts";

/**
 * Replays a Dockerfile without a Docker engine: the build context is the repository's files
 * (`git ls-files`, less .dockerignore), each stage's filesystem is a directory, and every RUN of
 * the stages built on top of the base image runs as written in it (absolute paths the Dockerfile
 * owns, such as WORKDIR, mapped into that directory). The base image's own RUN (apt-get, a global
 * pnpm) is what this machine already is: those are listed in `skipped`, not run.
 */
export interface ReplayResult {
  /** Directory standing for `/` of the final stage. */
  rootfs: string;
  /** The final stage's working directory, inside `rootfs`. */
  workdir: string;
  env: Record<string, string>;
  user: string | undefined;
  entrypoint: string[];
  cmd: string[];
  skipped: string[];
  /** Maps an absolute path of the image to the replayed directory. */
  map(path: string): string;
}

/** The official node image's `node` user. */
const IMAGE_USERS: Record<string, string> = { node: "1000" };

function ignoredBy(patterns: string[], file: string): boolean {
  return patterns.some((pattern) => {
    const bare = pattern.replace(/^\*\*\//, "");
    const segments = file.split("/");
    if (pattern.startsWith("**/")) return segments.some((s, i) => matches(bare, segments.slice(i).join("/")));
    return matches(pattern, file);
  });
}

function matches(pattern: string, path: string): boolean {
  const regex = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}(/|$)`);
  return regex.test(path);
}

function buildContext(repoRoot: string, target: string): void {
  const listed = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: repoRoot,
  })
    .toString()
    .split("\0")
    .filter(Boolean);
  const ignoreFile = join(repoRoot, ".dockerignore");
  const patterns = existsSync(ignoreFile)
    ? readFileSync(ignoreFile, "utf8")
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith("#"))
    : [];
  for (const file of listed) {
    if (ignoredBy(patterns, file) || !existsSync(join(repoRoot, file))) continue;
    mkdirSync(dirname(join(target, file)), { recursive: true });
    cpSync(join(repoRoot, file), join(target, file));
  }
}

function isEmpty(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0;
}

interface StageState {
  rootfs: string;
  workdir: string;
  env: Record<string, string>;
  user: string | undefined;
  entrypoint: string[];
  cmd: string[];
}

/** Whether stage `name` is still needed after stage `index` (so it must be copied, not moved). */
function usedAfter(stages: DockerStage[], name: string, index: number): boolean {
  return stages
    .slice(index + 1)
    .some((s) => s.from === name || s.instructions.some((i) => i.flags["from"] === name));
}

export function replayDockerfile(repoRoot: string, scratch: string): ReplayResult {
  const stages = parseDockerfile(readFileSync(join(repoRoot, "Dockerfile"), "utf8"));
  const context = join(scratch, "context");
  buildContext(repoRoot, context);

  // Absolute paths the Dockerfile owns: its WORKDIRs and absolute ENV values.
  const owned = new Set<string>();
  for (const stage of stages)
    for (const i of stage.instructions) {
      if (i.keyword === "WORKDIR") owned.add(i.args[0]!);
      if (i.keyword === "ENV")
        for (const pair of i.args) if (pair.split("=")[1]?.startsWith("/")) owned.add(pair.split("=")[1]!);
    }

  const skipped: string[] = [];
  let result: ReplayResult | undefined;
  const states = new Map<string, StageState>();
  stages.forEach((stage, index) => {
    const parent = states.get(stage.from);
    const rootfs = join(scratch, `stage-${index}`);
    if (
      parent &&
      !usedAfter(stages, stage.from, index) &&
      !stage.instructions.some((i) => i.flags["from"] === stage.from)
    )
      renameSync(parent.rootfs, rootfs);
    else if (parent) cpSync(parent.rootfs, rootfs, { recursive: true, verbatimSymlinks: true });
    else mkdirSync(rootfs, { recursive: true });
    const map = (path: string) => join(rootfs, path);
    const mapText = (text: string) => {
      let out = text;
      for (const path of owned)
        out = out.replace(new RegExp(`(^|[\\s=])${path}(?=[/\\s]|$)`, "g"), `$1${map(path)}`);
      for (const [user, uid] of Object.entries(IMAGE_USERS))
        out = out.replace(new RegExp(`\\b${user}:${user}\\b`, "g"), `${uid}:${uid}`);
      return out;
    };
    const fromImage = !parent;
    let workdir = parent?.workdir ?? "/";
    const env: Record<string, string> = { ...parent?.env };
    let user = parent?.user;
    let entrypoint = parent?.entrypoint ?? [];
    let cmd = parent?.cmd ?? [];
    for (const i of stage.instructions) {
      switch (i.keyword) {
        case "WORKDIR":
          workdir = i.args[0]!;
          mkdirSync(map(workdir), { recursive: true });
          break;
        case "ENV":
          for (const pair of i.args)
            env[pair.slice(0, pair.indexOf("="))] = pair.slice(pair.indexOf("=") + 1);
          break;
        case "USER":
          user = i.args[0];
          break;
        case "ENTRYPOINT":
          entrypoint = i.args;
          break;
        case "CMD":
          cmd = i.args;
          break;
        case "RUN":
          if (fromImage) skipped.push(i.text);
          else
            execFileSync("sh", ["-ec", mapText(i.text)], {
              cwd: map(workdir),
              env: { ...process.env, ...env, CI: "true" },
              stdio: ["ignore", "pipe", "pipe"],
            });
          break;
        case "COPY": {
          const sources = i.args.slice(0, -1);
          const dest = i.args.at(-1)!;
          const target = map(isAbsolute(dest) ? dest : join(workdir, dest));
          for (const source of sources) {
            const stageFrom = i.flags["from"] ? states.get(i.flags["from"]) : undefined;
            const from = stageFrom ? join(stageFrom.rootfs, source) : join(context, source);
            if (stageFrom && !usedAfter(stages, i.flags["from"]!, index) && isEmpty(target)) {
              rmSync(target, { recursive: true, force: true });
              mkdirSync(dirname(target), { recursive: true });
              renameSync(from, target);
            } else if (statSync(from).isDirectory())
              cpSync(from, target, { recursive: true, verbatimSymlinks: true });
            else {
              const file =
                dest.endsWith("/") || sources.length > 1 ? join(target, source.split("/").at(-1)!) : target;
              mkdirSync(dirname(file), { recursive: true });
              cpSync(from, file);
            }
          }
          break;
        }
        default:
          throw new Error(`replay does not know ${i.keyword}`);
      }
    }
    if (stage.name) states.set(stage.name, { rootfs, workdir, env, user, entrypoint, cmd });
    result = { rootfs, workdir: map(workdir), env, user, entrypoint, cmd, skipped, map };
  });
  rmSync(context, { recursive: true, force: true });
  return result!;
}
