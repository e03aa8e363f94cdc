import { REQUIRED_ROUTES, type OpencodeApi } from "./api/opencode-api.ts";
import { OpencodeContractError } from "./errors/opencode-contract.error.ts";
import { OpencodeHttpError } from "./errors/opencode-http.error.ts";
import { OpencodeTooOldError } from "./errors/opencode-too-old.error.ts";
import { compareVersions } from "./semver.ts";

/** Oldest opencode with the v2 `/api/*` routes this client uses. */
export const MIN_OPENCODE_VERSION = "1.18.18";

export interface ServerInfo {
  url: string;
  version: string;
}

/**
 * Start-up gate: healthy, new enough, and every route we call listed in `/doc`.
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
  let routes: Set<string>;
  try {
    routes = await api.routes(signal);
  } catch (err) {
    if (err instanceof OpencodeHttpError) throw new OpencodeContractError(url, `/doc answered ${err.status}`);
    throw err;
  }
  const missing = REQUIRED_ROUTES.filter(([m, p]) => !routes.has(`${m} ${p}`)).map(([m, p]) => `${m.toUpperCase()} ${p}`);
  if (missing.length) throw new OpencodeContractError(url, `missing routes ${missing.join(", ")} (version ${health.version})`);
  return { url, version: health.version };
}
