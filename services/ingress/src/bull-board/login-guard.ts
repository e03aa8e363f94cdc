import type { Logger, Redis, ServiceMetrics } from "@ratatoskr/runtime";
import type { RateLimiterAbstract, RateLimiterRes } from "rate-limiter-flexible";

/** Wrong logins a client may make before it is locked out. */
export const MAX_FAILED_LOGINS = 10;
/** The window those failures count in, and how long a lockout lasts (seconds). */
export const FAILED_LOGIN_WINDOW_S = 15 * 60;

export interface LoginGuardOptions {
  /** Shared by every ingress replica, so guessing through several of them counts once; memory without it. */
  redis?: Redis;
  /** Key prefix under QUEUE_PREFIX (one slot on a Redis Cluster with a hash-tagged prefix). */
  keyPrefix: string;
  logger: Pick<Logger, "warn">;
  /** `ratatoskr_login_failures_total{realm, reason}`. */
  failures: ServiceMetrics["loginFailures"];
  realm: string;
  maxFailures?: number;
  windowSeconds?: number;
}

/** The client is locked out for `retryAfterS` more seconds. */
export class LockedOutError extends Error {
  override readonly name = "LockedOutError";
  readonly statusCode = 429;
  constructor(readonly retryAfterS: number) {
    super("too many failed logins; try again later");
  }
}

export interface LoginGuard {
  /** Throws LockedOutError while `client` is locked out (the password is then not even checked). */
  check(client: string): Promise<void>;
  /**
   * A wrong login, counted in one atomic step (a burst of guesses at once cannot slip past the
   * count): logged, and past `maxFailures` a LockedOutError instead of a plain refusal.
   */
  failed(client: string, reason: string): Promise<void>;
  /** A right login: the client's earlier failures are forgotten. */
  succeeded(client: string): Promise<void>;
}

/**
 * Lockout after repeated failed logins, per client (rate-limiter-flexible: a failure consumes a
 * point; out of points, the key is blocked for the window). Redis holds the counts when given;
 * while Redis is away an in-process limiter stands in, so an outage never opens the door. The
 * library is loaded at the first login, not at start-up: an idle process never needs it.
 */
export function createLoginGuard(opts: LoginGuardOptions): LoginGuard {
  const points = opts.maxFailures ?? MAX_FAILED_LOGINS;
  const duration = opts.windowSeconds ?? FAILED_LOGIN_WINDOW_S;
  const limits = { points, duration, blockDuration: duration, keyPrefix: opts.keyPrefix };
  let loading: Promise<{ limiter: RateLimiterAbstract; isRes: (value: unknown) => value is RateLimiterRes }> | undefined;
  const load = () =>
    (loading ??= import("rate-limiter-flexible").then(({ RateLimiterMemory, RateLimiterRedis, RateLimiterRes }) => {
      const memory = new RateLimiterMemory(limits);
      const limiter = opts.redis
        ? new RateLimiterRedis({ ...limits, storeClient: opts.redis, insuranceLimiter: memory })
        : memory;
      return { limiter, isRes: (value: unknown): value is RateLimiterRes => value instanceof RateLimiterRes };
    }));

  /** Locked out: every point of the window spent and one more asked for (the key is then blocked). */
  const lockedFor = (res: RateLimiterRes | null) =>
    res !== null && res.consumedPoints > points && res.msBeforeNext > 0 ? Math.ceil(res.msBeforeNext / 1000) : 0;

  return {
    async check(client) {
      const { limiter } = await load();
      const seconds = lockedFor(await limiter.get(client));
      if (seconds === 0) return;
      opts.failures.inc({ realm: opts.realm, reason: "locked-out" });
      throw new LockedOutError(seconds);
    },
    async failed(client, reason) {
      const { limiter, isRes } = await load();
      const res = await limiter.consume(client).catch((rejected: unknown) => {
        if (isRes(rejected)) return rejected;
        throw rejected;
      });
      const seconds = lockedFor(res);
      opts.failures.inc({ realm: opts.realm, reason: seconds > 0 ? "locked-out" : reason });
      // The client, never the user name or password it tried.
      if (seconds === 0) opts.logger.warn({ client, realm: opts.realm, reason, failures: res.consumedPoints }, "login failed");
      else if (res.consumedPoints === points + 1)
        opts.logger.warn({ client, realm: opts.realm, failures: points, lockedForS: seconds }, "login locked out after repeated failures");
      if (seconds > 0) throw new LockedOutError(seconds);
    },
    async succeeded(client) {
      const { limiter } = await load();
      await limiter.delete(client);
    },
  };
}
