import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { timingSafeEqual } from "node:crypto";

/** One request the server saw (for assertions: what a git client sent). */
export interface GitHttpRequest {
  readonly method: string;
  readonly path: string;
  /** The Authorization header as received, or null. */
  readonly authorization: string | null;
  readonly status: number;
}

export interface GitHttpServerOptions {
  /** Directory of bare repositories: `<root>/<owner>/<name>.git`. */
  readonly root: string;
  /** When set, every request must carry `Authorization: Basic` with these; others get 401. */
  readonly auth?: { readonly username: string; readonly password: string };
  /** Port to listen on (default: a free one). */
  readonly port?: number;
}

export interface GitHttpServer {
  /** `http://127.0.0.1:<port>` — repositories are at `<url>/<owner>/<name>.git`. */
  readonly url: string;
  readonly requests: readonly GitHttpRequest[];
  close(): Promise<void>;
}

/**
 * A real smart-HTTP git server for tests: `git http-backend` run as CGI for each request over a
 * directory of bare repositories, with an optional basic-auth check. Clone, fetch and push work
 * exactly as against Gitea's git endpoint.
 */
export async function startGitHttpServer(options: GitHttpServerOptions): Promise<GitHttpServer> {
  const requests: GitHttpRequest[] = [];
  const server = createServer((req, res) => {
    const authorization = req.headers.authorization ?? null;
    const record = (status: number) => requests.push({ method: req.method ?? "GET", path: (req.url ?? "/").split("?")[0] ?? "/", authorization, status });
    if (options.auth && !authorized(authorization, options.auth)) {
      record(401);
      req.resume();
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="git"', "Content-Type": "text/plain" });
      res.end("authentication required\n");
      return;
    }
    runBackend(req, res, options.root, options.auth?.username ?? "anonymous").then(record, (error: unknown) => {
      record(500);
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" });
      res.end(`git http-backend failed: ${error instanceof Error ? error.message : String(error)}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function authorized(header: string | null, auth: { username: string; password: string }): boolean {
  if (!header?.startsWith("Basic ")) return false;
  const given = Buffer.from(header.slice("Basic ".length).trim(), "base64");
  const expected = Buffer.from(`${auth.username}:${auth.password}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Runs one CGI request through `git http-backend` over the bare repositories under `root`;
 * resolves with the HTTP status sent. `user` is who the caller authenticated as.
 */
export function runBackend(req: IncomingMessage, res: ServerResponse, root: string, user: string): Promise<number> {
  const url = new URL(req.url ?? "/", "http://localhost");
  const child = spawn("git", ["http-backend"], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: "1",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      // Allows push (receive-pack) for whoever passed the auth check above.
      REMOTE_USER: user,
      REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
      REQUEST_METHOD: req.method ?? "GET",
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.replace(/^\?/, ""),
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      ...(req.headers["content-length"] ? { CONTENT_LENGTH: req.headers["content-length"] } : {}),
      ...(req.headers["content-encoding"] ? { HTTP_CONTENT_ENCODING: req.headers["content-encoding"] } : {}),
      ...(req.headers["git-protocol"] ? { GIT_PROTOCOL: String(req.headers["git-protocol"]) } : {}),
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  req.pipe(child.stdin);
  child.stdin.on("error", () => undefined); // backend may exit before reading everything (e.g. 404)
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    let status = 200;
    let headersDone = false;
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const crlf = head.indexOf("\r\n\r\n");
      const lf = head.indexOf("\n\n");
      const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf + 4 : lf >= 0 ? lf + 2 : -1;
      if (end < 0) return;
      headersDone = true;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString("latin1").split(/\r?\n/)) {
        const colon = line.indexOf(":");
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10) || 500;
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end));
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (!headersDone) {
        reject(new Error(`exit ${code}: ${stderr.trim().slice(0, 300)}`));
        return;
      }
      res.end();
      resolve(status);
    });
  });
}
