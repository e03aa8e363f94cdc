import { REQUIRED_ROUTES, type OpencodeApi } from "./api/opencode-api.ts";
import { TESTED_OPENCODE_VERSION } from "./errors/install-hint.ts";
import { OpencodeContractError } from "./errors/opencode-contract.error.ts";
import { OpencodeHttpError } from "./errors/opencode-http.error.ts";
import { OpencodeTooOldError } from "./errors/opencode-too-old.error.ts";
import { compareVersions } from "./semver.ts";

/** Oldest opencode with the v2 `/api/*` routes this client uses. */
export const MIN_OPENCODE_VERSION = "1.18.18";

/**
 * Releases whose `/doc` is known to list every route we call: the one the tests run against (a
 * test reads that release's `/doc` and checks it). A server reporting one of them is not asked
 * for `/doc`, which costs a fresh opencode ~2.8 s of CPU to build (480 KB).
 */
const ROUTES_KNOWN_FOR: ReadonlySet<string> = new Set([TESTED_OPENCODE_VERSION]);

export interface ServerInfo {
  url: string;
  version: string;
}

/**
 * Start-up gate: healthy, new enough, and every route we call listed in `/doc` (taken as read
 * for the release the tests run against).
 * Throws OpencodeUnavailableError / OpencodeTooOldError / OpencodeContractError.
 * `passed`: what an earlier check of this server found; while it reports the same version, its
 * routes are not read again (readiness probes ask often, and `/doc` is large).
 */
export async function checkServer(api: OpencodeApi, signal?: AbortSignal, passed?: ServerInfo): Promise<ServerInfo> {
  const url = api.http.baseUrl;
  let health;
  try {
    health = await api.health(signal);
  } catch (err) {
    if (err instanceof OpencodeHttpError) throw new OpencodeContractError(url, `/global/health answered ${err.status}${err.status === 401 ? " (wrong password?)" : ""}`);
    throw err;
  }
  if (!health.healthy) throw new OpencodeContractError(url, "/global/health reports unhealthy");
  if (compareVersions(health.version, MIN_OPENCODE_VERSION) < 0) throw new OpencodeTooOldError(url, health.version, MIN_OPENCODE_VERSION);
  if (passed?.url === url && passed.version === health.version) return passed;
  if (!ROUTES_KNOWN_FOR.has(health.version)) await refuseMissingRoutes(api, url, health.version, signal);
  await refuseOpenServer(url, signal);
  await refuseUnsandboxedTools(api, url, signal);
  return { url, version: health.version };
}

async function refuseMissingRoutes(api: OpencodeApi, url: string, version: string, signal?: AbortSignal): Promise<void> {
  let routes: Set<string>;
  try {
    routes = await api.routes(signal);
  } catch (err) {
    if (err instanceof OpencodeHttpError) throw new OpencodeContractError(url, `/doc answered ${err.status}`);
    throw err;
  }
  const missing = REQUIRED_ROUTES.filter(([m, p]) => !routes.has(`${m} ${p}`)).map(([m, p]) => `${m.toUpperCase()} ${p}`);
  if (missing.length) throw new OpencodeContractError(url, `missing routes ${missing.join(", ")} (version ${version})`);
}

/** Full checks under way, by server URL: shared by every client of this process. */
const inFlight = new Map<string, Promise<ServerInfo>>();

/**
 * {@link checkServer}, joined with a full check of the same server already under way in this
 * process. A server's first check may read `/doc` (480 KB; seconds on a busy host) and reads `/config`
 * (which boots opencode's instance): the all-in-one's agent services and a readiness probe that
 * arrives during the start-up check would otherwise each read them at once and slow them all.
 */
export async function checkServerOnce(api: OpencodeApi, signal?: AbortSignal, passed?: ServerInfo): Promise<ServerInfo> {
  const url = api.http.baseUrl;
  if (passed?.url === url) return checkServer(api, signal, passed);
  let shared = inFlight.get(url);
  if (!shared) {
    shared = checkServer(api, signal).finally(() => inFlight.delete(url));
    inFlight.set(url, shared);
  }
  if (!signal) return shared;
  signal.throwIfAborted();
  return new Promise<ServerInfo>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    shared.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** The shell deploy/opencode/serve (and the test kit) give opencode: every agent command in bubblewrap. */
export const SANDBOX_SHELL_SUFFIX = "/sandbox/bash";

/**
 * A server whose bash tool runs commands with a plain shell gives every agent the server's own
 * environment (its password, the model keys) and every file and process of its user (S1). Its
 * explicit opt-out, RATATOSKR_SANDBOX=off, lives on the opencode side and keeps this shell.
 */
async function refuseUnsandboxedTools(api: OpencodeApi, url: string, signal?: AbortSignal): Promise<void> {
  const config = await api.config(signal).catch((err: unknown) => {
    if (err instanceof OpencodeHttpError) throw new OpencodeContractError(url, `/config answered ${err.status}`);
    throw err;
  });
  if (!config.shell?.endsWith(SANDBOX_SHELL_SUFFIX)) {
    throw new OpencodeContractError(
      url,
      `runs agent commands with ${config.shell ? `the shell ${config.shell}` : "its default shell"}, outside the tool sandbox: start it with deploy/opencode/serve (or set its shell to deploy/opencode/sandbox/bash)`,
    );
  }
}

/**
 * A server that answers without a password lets any process that reaches it read and drive
 * every task's sessions (S3): the services refuse to use one (deploy/opencode/serve never
 * starts one).
 */
async function refuseOpenServer(url: string, signal?: AbortSignal): Promise<void> {
  let status: number;
  try {
    const res = await fetch(`${url}/global/health`, { signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(5_000)]) : AbortSignal.timeout(5_000) });
    status = res.status;
    await res.body?.cancel();
  } catch {
    return; // unreachable now: the authenticated check just passed, the next one will tell
  }
  if (status !== 401 && status !== 403) {
    throw new OpencodeContractError(url, "answers without a password: anything that reaches it can read and drive every session; start it with OPENCODE_SERVER_PASSWORD set and give the services the same password");
  }
}
