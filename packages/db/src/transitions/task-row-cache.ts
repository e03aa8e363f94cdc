import type { Task } from "../../generated/client.ts";

/** How many task rows a process remembers: the tasks it is working on, not its history. */
const DEFAULT_CAPACITY = 1_000;

/**
 * The task rows this process last wrote, so the next transition of a task can skip reading it.
 * Only a hint: the write is guarded by the row's version and `updated_at`, so a row that moved on
 * elsewhere (another process, a Prisma update) writes nothing and is read afresh, and a refusal
 * planned on a remembered row is re-checked on a fresh read. Least recently written goes first.
 */
export class TaskRowCache {
  private readonly rows = new Map<number, Task>();

  constructor(private readonly capacity = DEFAULT_CAPACITY) {}

  get(taskId: number): Task | undefined {
    return this.rows.get(taskId);
  }

  /** Keeps the newer of `task` and the row remembered (writes of one task may finish out of order). */
  set(task: Task): void {
    const known = this.rows.get(task.id);
    if (known && known.version > task.version) return;
    this.rows.delete(task.id);
    this.rows.set(task.id, task);
    if (this.rows.size > this.capacity) {
      const oldest = this.rows.keys().next();
      if (!oldest.done) this.rows.delete(oldest.value);
    }
  }

  delete(taskId: number): void {
    this.rows.delete(taskId);
  }
}
