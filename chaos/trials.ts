import { PIPELINE_TRIALS } from "./pipeline/trials.ts";
import { sendProbe, type Probe } from "./probes.ts";
import { sleep, until, type RoundContext, type Trial } from "./trial.ts";
import { postUpdateTwice } from "./webhook-updates.ts";

const PER_ROUND = 3;
function sendAll(ctx: RoundContext, count = PER_ROUND): Probe[] {
  return Array.from({ length: count }, () => sendProbe(ctx.world, ctx.model, ctx.nextChat(), ctx.trial));
}

/** The analyst is working on one of the probes: opencode asked the model about it. */
const analysing = (ctx: RoundContext, probes: Probe[]) => () =>
  ctx.model.requests.some((r) => probes.some((p) => r.userTexts.some((t) => t.includes(p.mark))));

const killTrial = (
  name: "ingress" | "analyst" | "notifier",
  fault: string,
  inFlight: (ctx: RoundContext, probes: Probe[]) => Promise<void>,
  settleMs?: number,
): Trial => ({
  name: `${name}-killed`,
  fault,
  ...(settleMs === undefined ? {} : { settleMs }),
  async round(ctx) {
    const probes = sendAll(ctx);
    await inFlight(ctx, probes);
    const { killedAt } = await ctx.world.killAndRestart(name);
    return { probes, healedAt: killedAt };
  },
});

/** Trials on the dialogue: a person writes, the analyst asks back, the person must see it once. */
export const DIALOGUE_TRIALS: Trial[] = [
  killTrial("ingress", "kill -9 ingress while it takes the updates", async () => sleep(50 + Math.random() * 400)),
  killTrial("analyst", "kill -9 analyst mid-run", async (ctx, probes) => until("the analyst runs", analysing(ctx, probes))),
  killTrial("notifier", "kill -9 notifier mid-send", async (ctx) => {
    ctx.world.proxy.inject({ kind: "slow-send", delayMs: 2_000 });
    await until("a reply is being sent", () => ctx.world.proxy.sendsInFlight > 0, 60_000);
    ctx.world.proxy.clear();
    // The reply in flight reached the chat; the fresh notifier settles it (and resends a question,
    // marked) once the dead one's 4 s lease is gone: watch that long before counting it stuck.
  }, 10_000),
  {
    name: "redis-wiped",
    fault: "FLUSHALL while the analyst runs",
    async round(ctx) {
      const probes = sendAll(ctx);
      await until("the analyst runs", analysing(ctx, probes));
      await ctx.world.redis.wipe();
      return { probes, healedAt: Date.now() };
    },
  },
  {
    name: "redis-restarted",
    fault: "Redis killed, back empty after 3 s",
    async round(ctx) {
      const probes = sendAll(ctx);
      await until("the analyst runs", analysing(ctx, probes));
      await ctx.world.redis.kill();
      await sleep(3_000);
      await ctx.world.redis.start();
      return { probes, healedAt: Date.now() };
    },
  },
  {
    name: "postgres-stopped",
    fault: "Postgres stopped for 25 s",
    async round(ctx) {
      const probes = sendAll(ctx);
      await until("the analyst runs", analysing(ctx, probes));
      await ctx.world.postgres.stop();
      await sleep(25_000);
      await ctx.world.postgres.start();
      return { probes, healedAt: Date.now() };
    },
  },
  {
    name: "telegram-slow",
    fault: "sendMessage answered after 25 s",
    settleMs: 35_000,
    async round(ctx) {
      ctx.world.proxy.inject({ kind: "slow-send", delayMs: 25_000 }, PER_ROUND);
      const probes = sendAll(ctx);
      return { probes, healedAt: Date.now() };
    },
  },
  {
    name: "telegram-reset",
    fault: "sendMessage delivered, connection reset",
    settleMs: 10_000,
    async round(ctx) {
      ctx.world.proxy.inject({ kind: "reset-send" }, PER_ROUND);
      const probes = sendAll(ctx);
      return { probes, healedAt: Date.now() };
    },
  },
  {
    name: "updates-replayed",
    fault: "getUpdates hands out old updates again",
    async round(ctx) {
      const first = sendAll(ctx);
      await until("the first messages are answered", () => first.every(answered), 60_000);
      ctx.world.proxy.inject({ kind: "replay-updates" }, 1);
      const second = sendAll(ctx);
      return { probes: [...first, ...second], healedAt: Date.now() };
    },
  },
  {
    name: "webhook-duplicate",
    fault: "same update_id posted twice at once, and again later",
    world: { webhook: true },
    async round(ctx) {
      const sentAt = Date.now();
      const sent = await Promise.all(
        Array.from({ length: PER_ROUND }, () => postUpdateTwice(ctx.world, ctx.model, ctx.nextChat(), ctx.trial)),
      );
      const probes = sent.map((s) => s.probe);
      await until("the messages are answered", () => probes.every(answered), 60_000);
      await Promise.all(sent.map((s) => s.replay()));
      return { probes, healedAt: sentAt };
    },
  },
];

const answered = (probe: Probe) => probe.answeredAt() !== undefined;

/** Every trial `pnpm chaos` knows, in the order it runs them. */
export const TRIALS: Trial[] = [...DIALOGUE_TRIALS, ...PIPELINE_TRIALS];
