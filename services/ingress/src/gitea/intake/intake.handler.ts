import { isPermanentError, type JobHandler } from "@ratatoskr/runtime";
import { coalesceDispatches } from "./dispatch-coalescer.ts";
import { dispatchNext } from "./dispatch-next.handler.ts";
import type { IntakeDeps } from "./intake-deps.ts";
import { failPublish, publishCommand } from "./publish-command.ts";
import { failRoute, routeCommand } from "./route-command.handler.ts";
import { createShownPositions } from "./shown-positions.ts";

/**
 * The `intake` queue: route one stored command, start what may start on an issue/PR, publish a
 * finished one, or make the stored commands into tasks (`drainCommands`, the command inbox's
 * drain, asked by a replica that takes no intake jobs).
 */
export function createIntakeHandler(
  deps: IntakeDeps,
  drainCommands: () => Promise<{ settled: number }>,
): JobHandler<"intake"> {
  const shown = createShownPositions();
  const dispatch = coalesceDispatches((targetKey, joined) => dispatchNext(deps, targetKey, shown, joined));
  return async (data, ctx) => {
    switch (data.kind) {
      case "route-command":
        try {
          return await routeCommand(deps, data.taskId);
        } catch (err) {
          if (lastTry(ctx.job, err)) await failRoute(deps, data.taskId, err);
          throw err;
        }
      case "dispatch-next":
        return { started: await dispatch(data.targetKey, data.joined) };
      case "drain-commands":
        return { settled: (await drainCommands()).settled };
      case "publish":
        try {
          return await publishCommand(deps, data.taskId);
        } catch (err) {
          // Gitea stayed unreachable through every attempt: the command fails saying so, never hangs.
          if (lastTry(ctx.job, err)) await failPublish(deps, data.taskId, err);
          throw err;
        }
    }
  };
}

/** This attempt was the job's last: its attempts are spent, or the error says retrying cannot help. */
function lastTry(job: { attemptsMade: number; opts: { attempts?: number } }, err: unknown): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1) || isPermanentError(err);
}
