/**
 * One queue, two front doors: Telegram tasks and Gitea commands follow different state machines,
 * so each gets its own handler of a shared queue (dev, review, analyst); the task's `source`
 * decides. A missing task goes to the Telegram handler, which says so.
 */
export function bySource<D, C, R>(
  tasks: { findById(id: number): Promise<{ source: string } | null> },
  handlers: { telegram: (data: D, ctx: C) => Promise<R>; gitea: (data: D, ctx: C) => Promise<R> },
): (data: D, ctx: C) => Promise<R> {
  return async (data, ctx) => {
    const taskId = (data as { taskId?: unknown }).taskId;
    const task = typeof taskId === "number" ? await tasks.findById(taskId) : null;
    return task?.source === "gitea" ? handlers.gitea(data, ctx) : handlers.telegram(data, ctx);
  };
}
