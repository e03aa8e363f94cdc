import { reply, type ServiceProcess } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANALYST } from "../support/backup-dialogue.ts";
import { DEV, PipelineHarness, REVIEWER, waitFor, type PipelineService } from "./pipeline-harness.ts";

/**
 * Scale-out as it is deployed: ingress once, two replicas of every worker service as separate
 * processes, two opencode servers, short sweeps (the step sweeper looks at every job twice a
 * second, so a job finishing between its read and its write is likely). A dozen people talk to
 * the bot at once, from /start to a pushed branch, while one replica of each worker service is
 * killed mid-run and not brought back. Every task succeeds once, every chat reads each step once
 * and in order, and no ref other than the task branches moves on any remote.
 */
const h = new PipelineHarness();
const WORKERS = ["analyst", "dev", "reviewer", "postmortem", "notifier"] as const satisfies readonly PipelineService[];
const CHATS = Array.from({ length: 12 }, (_, i) => 301 + i);
const replicas = new Map<string, ServiceProcess>();

beforeAll(async () => {
  const sweeps = {
    PIPELINE_SWEEP_INTERVAL_MS: "500",
    PIPELINE_SWEEP_GRACE_MS: "1000",
    ANALYST_SWEEP_INTERVAL_MS: "500",
    ANALYST_SWEEP_GRACE_MS: "1000",
    NOTIFIER_STALE_SWEEP_INTERVAL_MS: "1000",
  };
  await h.start(["ingress"], { TELEGRAM_ALLOWED_CHAT_IDS: CHATS.join(","), ...sweeps }, undefined, { servers: 2 });
  // Debug logs say when a replica took a job ("job started"): the kill waits for that.
  const started = await Promise.all(
    WORKERS.flatMap((name) => [1, 2].map(async (n) => [`${name}-${n}`, await h.startService(name, { LOG_LEVEL: "debug" })] as const)),
  );
  for (const [key, service] of started) {
    replicas.set(key, service);
    h.running.set(key, service);
  }
}, 240_000);

afterAll(async () => {
  await h.stop();
});

const repoOf = (i: number) => `acme/scale-${i}`;
/** Zero-padded, so that no person's mark is part of another's ("1" is part of "11"). */
const mark = (i: number) => String(i).padStart(2, "0");
const titleOf = (i: number) => `Scale task ${mark(i)}`;

/** The model's part for person i: a draft at once, one file, a pass; every reply slow enough to be killed under. */
function script(i: number): void {
  const title = titleOf(i);
  const draft = reply.json({
    phase: "propose",
    draft: { title, goal: "A file appears in the repository.", repos: [repoOf(i)], why: "Load.", acceptanceCriteria: ["a file is pushed"] },
  });
  // Each step's second rule is what a retried job, resuming the same session after its
  // replica died, is answered with (the first rule's turns are used up in that session).
  h.model.addRule({ match: { systemIncludes: ANALYST, promptIncludes: `scale request ${mark(i)}:` }, reply: [{ ...draft, delayMs: 1_500 }] });
  h.model.addRule({ match: { systemIncludes: ANALYST, promptIncludes: `scale request ${mark(i)}:` }, reply: [draft] });
  const done = reply.json({ summary: "file added", done: true });
  h.model.addRule({
    match: { systemIncludes: DEV, promptIncludes: title },
    reply: [reply.write(`${repoOf(i)}/scale.txt`, `${title}\n`), { ...done, delayMs: 2_000 }],
  });
  h.model.addRule({ match: { systemIncludes: DEV, promptIncludes: title }, reply: [reply.write(`${repoOf(i)}/scale.txt`, `${title}\n`), done] });
  const passed = reply.json({ passed: true, summary: "fine", findings: [] });
  h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: title }, reply: [{ ...passed, delayMs: 1_500 }] });
  h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: title }, reply: [passed] });
}

/** One person: /start, the request, the draft, "go", then the end of the task. */
async function person(i: number): Promise<void> {
  const chat = CHATS[i]!;
  h.telegram.sendText(chat, "/start");
  await h.waitForText(chat, "#", 60_000);
  h.telegram.sendText(chat, `scale request ${mark(i)}: add a file under load`);
  await h.waitForText(chat, titleOf(i), 120_000);
  h.telegram.sendText(chat, "go");
  await h.waitForText(chat, "is done", 300_000);
}

/** Jobs the process logged as started and not (yet) as completed or skipped. */
function jobsInFlight(output: string): string[] {
  const open = new Set<string>();
  for (const line of output.split("\n")) {
    const entry = /"jobId":"([^"]+)".*"msg":"job (started|completed|skipped)"/.exec(line);
    if (!entry) continue;
    if (entry[2] === "started") open.add(entry[1]!);
    else open.delete(entry[1]!);
  }
  return [...open];
}

/** What each killed replica was in the middle of. */
const cutShort = new Map<string, string[]>();

/** kill -9 the first replica of `name` while it is working on a job, and leave it dead. */
async function killMidRun(name: (typeof WORKERS)[number]): Promise<void> {
  const key = `${name}-1`;
  const service = replicas.get(key)!;
  if (name === "notifier") {
    // A send takes milliseconds: mid-pipeline, a few sends reach the chat but answer late.
    await waitFor(h, async () => (h.telegram.requests("sendMessage").length >= 20 ? true : undefined), 240_000);
    h.telegram.answerLate("sendMessage", 3_000, 4);
  }
  // Nothing fails here, so the postmortem replicas stay idle: one of them dies all the same.
  const inFlight =
    name === "postmortem" ? [] : await waitFor(h, async () => nonEmpty(jobsInFlight(service.output())), 240_000);
  await service.stop("SIGKILL");
  h.running.delete(key);
  cutShort.set(name, inFlight);
}

const nonEmpty = <T>(list: T[]) => (list.length > 0 ? list : undefined);

describe("scale-out: replicas of every worker service, two opencode servers", () => {
  it("a dozen tasks at once survive the loss of one replica of each service", async () => {
    const repos = CHATS.map((_, i) => repoOf(i));
    await Promise.all(repos.map((repo) => h.repo(repo)));
    await Promise.all(repos.map((repo) => h.git(repo, ["config", "core.logAllRefUpdates", "always"])));
    const mainBefore = await Promise.all(repos.map((repo) => h.git(repo, ["rev-parse", "refs/heads/main"])));
    CHATS.forEach((_, i) => script(i));

    const people = Promise.all(CHATS.map((_, i) => person(i)));
    const kills = Promise.all(WORKERS.map(killMidRun));
    await Promise.all([people, kills]).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });

    const tasks = await h.database.db.prisma.task.findMany({ where: { chatId: { in: CHATS.map(BigInt) } }, orderBy: { id: "asc" } });
    expect(tasks.map((t) => t.status)).toEqual(CHATS.map(() => "success"));

    for (const [i, chat] of CHATS.entries()) {
      const task = tasks.find((t) => Number(t.chatId) === chat)!;
      // Each step once and in order. A send in doubt (the killed notifier died mid-send) follows
      // the delivery rules: a must-deliver step comes again marked "(resent)", at most once; the
      // "approved" acknowledgement is recorded uncertain and not resent, so it may be missing.
      const mine = h.texts(chat).filter((t) => t.includes(`#${task.id}`));
      const order = ["is approved", "is at work", "round 1: the changes are pushed", "is done"];
      const approvedRow = await h.database.db.prisma.notification.findFirst({ where: { taskId: task.id, template: "task.approved" } });
      const shown = order.map((step) => {
        const plain = mine.filter((t) => t.includes(step) && !t.includes("(resent)")).length;
        const resent = mine.filter((t) => t.includes(step) && t.includes("(resent)")).length;
        if (plain === 1 && resent === 0) return "once";
        if (step === "is approved") return plain === 0 && resent === 0 && approvedRow?.status === "uncertain" ? "once" : { plain, resent };
        return plain + resent >= 1 && plain <= 1 && resent <= 1 ? "once" : { plain, resent };
      });
      expect({ chat, shown }).toEqual({ chat, shown: order.map(() => "once") });
      const positions = order.map((step) => mine.findIndex((t) => t.includes(step))).filter((at) => at >= 0);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);

      // Approved once, pushed once, and nothing but the task branch touched on the remote.
      const approvals = await h.database.db.prisma.taskEvent.count({ where: { taskId: task.id, type: "user.approved" } });
      expect(approvals).toBe(1);
      const refs = (await h.git(repoOf(i), ["for-each-ref", "--format=%(refname) %(objectname)"])).trim().split("\n");
      const tip = (await h.git(repoOf(i), ["rev-parse", `refs/heads/${task.branch}`])).trim();
      expect(refs.sort()).toEqual([`refs/heads/${task.branch} ${tip}`, `refs/heads/main ${mainBefore[i]!.trim()}`].sort());
      const pushes = await h.git(repoOf(i), ["reflog", "show", "--format=%H", `refs/heads/${task.branch}`]);
      expect(pushes.trim().split("\n").filter(Boolean)).toHaveLength(1);
      expect(await h.git(repoOf(i), ["show", `refs/heads/${task.branch}:scale.txt`])).toBe(`${titleOf(i)}\n`);
    }

    expect([...cutShort.keys()].sort()).toEqual([...WORKERS].sort());
    for (const name of ["analyst", "dev", "reviewer", "notifier"]) expect({ name, cut: cutShort.get(name)!.length > 0 }).toEqual({ name, cut: true });

    // The killed replicas were working: their jobs were finished by the others, on both servers.
    const traces = await h.database.db.prisma.agentTrace.findMany({ where: { taskId: { in: tasks.map((t) => t.id) } } });
    const urls = new Set(h.pool.map((s) => s.url));
    expect(new Set(traces.filter((t) => t.agent === "dev").map((t) => t.serverUrl))).toEqual(urls);
    expect(new Set(traces.filter((t) => t.agent === "reviewer").map((t) => t.serverUrl))).toEqual(urls);
    expect(traces.filter((t) => t.outcome === "running")).toEqual([]);
    const failedEvents = await h.database.db.prisma.taskEvent.count({
      where: { taskId: { in: tasks.map((t) => t.id) }, type: { in: ["run.failed", "run.timed_out"] } },
    });
    expect(failedEvents).toBe(0);
  }, 600_000);
});
