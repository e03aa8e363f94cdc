/**
 * State transitions (reducer, task row, event row, notification and outbox rows in one statement;
 * at 100 tasks at once, group-committed in batches) against the floor: a single-row `UPDATE` with
 * pg on a pool of the same size.
 * At one task (sequential) and at 100 tasks at once. The Prisma path (the code before issue 9,
 * still used for transitions with writes `alongside`) runs too, for the before/after.
 * `pnpm tsx bench/transitions.ts [--smoke]`
 */
import pg from "pg";
import type { TaskEvent } from "../packages/contracts/src/index.ts";
import { createRepositories, type Repositories } from "../packages/db/src/index.ts";
import { benchDatabase, DATABASE_URL } from "./lib/bench-env.ts";
import {
  benchMain,
  interleave,
  median,
  ratioRow,
  throughput,
  type BenchOptions,
  type BenchRow,
} from "./lib/bench-harness.ts";

/** A cycle that writes outbox rows every step: ready → retried (analyst + notice) → drafted (notice) → … */
const CYCLE: TaskEvent[] = [
  { type: "user.retried" },
  { type: "analyst.drafted", consumedTurns: 0, forced: false },
];

/** pg's default pool size, the pool under the Prisma adapter. */
const POOL_SIZE = 10;

async function readyTasks(repos: Repositories, n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const task = await repos.tasks.createTelegramTask({ chatId: 10_000 + i, maxTurns: 1000, maxRounds: 3 });
    await repos.applyTransition(task.id, { type: "turn.received" });
    await repos.applyTransition(task.id, { type: "analyst.drafted", consumedTurns: 1, forced: false });
    ids.push(task.id);
  }
  return ids;
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const { db, schema, drop } = await benchDatabase("transitions");
  const floorPool = new pg.Pool({ connectionString: DATABASE_URL, options: `-c search_path=${schema}` });
  try {
    const repos = createRepositories(db.prisma);
    const wide = options.smoke ? 4 : 100;
    const ids = await readyTasks(repos, wide);
    // Each task has its own place in the cycle, so transitions of different tasks never collide.
    const step = new Map(ids.map((id) => [id, 0]));
    const viaSql = (id: number) =>
      repos.applyTransition(id, CYCLE[step.set(id, (step.get(id) ?? 0) + 1).get(id)! % 2 === 1 ? 0 : 1]!);
    const viaPrisma = (id: number) =>
      repos.applyTransition(id, CYCLE[step.set(id, (step.get(id) ?? 0) + 1).get(id)! % 2 === 1 ? 0 : 1]!, {
        alongside: async () => undefined,
      });
    const update = (id: number) => floorPool.query("UPDATE tasks SET updated_at = now() WHERE id = $1", [id]);

    const one = options.smoke ? 10 : 600;
    const many = options.smoke ? 20 : 3000;
    const rounds = options.smoke ? 1 : 3;
    const first = ids[0]!;
    const single = await interleave(rounds, {
      ours: () => throughput(one, 1, async () => void (await viaSql(first))),
      // The before/after note only: a tenth of the count (it is 5–20× slower, and only a note).
      prisma: () => throughput(Math.ceil(one / 10), 1, async () => void (await viaPrisma(first))),
      floor: () => throughput(one, 1, async () => void (await update(first))),
    });
    const parallel = await interleave(rounds, {
      ours: () => throughput(many, wide, async (_, lane) => void (await viaSql(ids[lane]!))),
      // Prisma gives up on a transaction that waits over 2 s for a connection: at most a pool's worth in flight.
      prisma: () =>
        throughput(
          Math.ceil(many / 10),
          Math.min(wide, POOL_SIZE),
          async (_, lane) => void (await viaPrisma(ids[lane]!)),
        ),
      floor: () => throughput(many, wide, async (_, lane) => void (await update(ids[lane]!))),
    });
    const before = (r: Record<"prisma", number[]>) =>
      `Prisma path (before): ${Math.round(median(r.prisma))}/s`;
    return [
      {
        ...ratioRow(options, {
          measure: "transition + outbox, 1 task",
          ours: median(single.ours),
          floor: median(single.floor),
          unit: "/s",
          minRatio: 1 / 3,
          note: before(single),
        }),
        aim: "≥ 0.33× (≤ 3× the time)",
      },
      {
        ...ratioRow(options, {
          measure: `transition + outbox, ${wide} tasks at once`,
          ours: median(parallel.ours),
          floor: median(parallel.floor),
          unit: "/s",
        }),
        aim: "≥ 1,500/s",
        met: options.smoke ? null : median(parallel.ours) >= 1500,
        note: before(parallel),
      },
    ];
  } finally {
    await floorPool.end();
    await drop();
  }
}

benchMain(import.meta.url, run);
