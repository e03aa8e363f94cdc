import { execFile } from "node:child_process";
import { access } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { runBackend } from "../git-http/git-http.server.ts";
import { apiError, GITEA_MESSAGES } from "./gitea-api.errors.ts";

const exec = promisify(execFile);

/** The fake's git side: bare repositories `<root>/<owner>/<name>.git`, served over smart HTTP. */
export class GitBacking {
  constructor(readonly root: string) {}

  bareDir(fullName: string): string {
    return path.join(this.root, `${fullName.toLowerCase()}.git`);
  }

  async has(fullName: string): Promise<boolean> {
    return access(this.bareDir(fullName)).then(
      () => true,
      () => false,
    );
  }

  /** The commit a branch points at, or undefined when the branch (or repository) does not exist. */
  async branchSha(fullName: string, branch: string): Promise<string | undefined> {
    if (!(await this.has(fullName))) return undefined;
    try {
      const { stdout } = await exec("git", ["rev-parse", "--verify", "-q", `refs/heads/${branch}^{commit}`], {
        cwd: this.bareDir(fullName),
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
      });
      return stdout.trim() || undefined;
    } catch {
      return undefined;
    }
  }
}

/** The login git authenticated as: Gitea takes the token as the password (any user name) or as the user. */
function gitLogin(request: FastifyRequest, token: string): string | undefined {
  const header = request.headers.authorization;
  if (!header?.startsWith("Basic ")) return undefined;
  const decoded = Buffer.from(header.slice("Basic ".length).trim(), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  const user = colon >= 0 ? decoded.slice(0, colon) : decoded;
  const password = colon >= 0 ? decoded.slice(colon + 1) : "";
  if (password === token) return user || "token";
  if (user === token) return "token";
  return undefined;
}

const GIT_BODY_TYPES = ["application/x-git-upload-pack-request", "application/x-git-receive-pack-request"];

/**
 * `<base>/<owner>/<name>.git/...` through `git http-backend`, as Gitea serves its repositories:
 * every request needs the token in basic auth (private repositories), else 401 with a challenge.
 */
export function registerGitRoutes(
  app: FastifyInstance,
  deps: { git: () => GitBacking | undefined; token: string; baseUrl: () => string; onGit?: (authorized: boolean) => void },
): void {
  // The pack bodies stay unread: git http-backend reads them from the raw request.
  app.addContentTypeParser(GIT_BODY_TYPES, (_request, _payload, done) => done(null));
  app.route<{ Params: { owner: string; name: string; "*": string } }>({
    method: ["GET", "POST"],
    url: "/:owner/:name/*",
    handler: async (request, reply) => {
      const { owner, name } = request.params;
      const git = deps.git();
      const fullName = `${owner}/${name.replace(/\.git$/, "")}`;
      if (!name.endsWith(".git") || !git || !(await git.has(fullName)))
        return reply.code(404).send(apiError(deps.baseUrl(), GITEA_MESSAGES.notFound));
      const login = gitLogin(request, deps.token);
      deps.onGit?.(login !== undefined);
      if (login === undefined) {
        return reply
          .code(401)
          .header("WWW-Authenticate", 'Basic realm="Gitea"')
          .send("Unauthorized\n");
      }
      const original = request.raw.url ?? "/";
      // http-backend finds `<owner>/<name>.git` under the root; Gitea's names are case-insensitive.
      request.raw.url = original.replace(`/${owner}/${name}`, `/${fullName.toLowerCase()}.git`);
      reply.hijack();
      await runBackend(request.raw, reply.raw, git.root, login).catch((err: unknown) => {
        if (!reply.raw.headersSent) reply.raw.writeHead(500, { "Content-Type": "text/plain" });
        reply.raw.end(`git http-backend failed: ${err instanceof Error ? err.message : String(err)}\n`);
      });
    },
  });
}
