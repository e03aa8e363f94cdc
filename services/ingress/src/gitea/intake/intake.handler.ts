import type { JobHandler } from "@ratatoskr/runtime";
import { coalesceDispatches } from "./dispatch-coalescer.ts";
import { dispatchNext } from "./dispatch-next.handler.ts";
import type { IntakeDeps } from "./intake-deps.ts";
import { failPublish, publishCommand } from "./publish-command.ts";
import { routeCommand } from "./route-command.handler.ts";
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
        return routeCommand(deps, data.taskId);
      case "dispatch-next":
        return { started: await dispatch(data.targetKey, data.joined) };
      case "drain-commands":
        return { settled: (await drainCommands()).settled };
      case "publish":
        try {
          return await publishCommand(deps, data.taskId);
        } catch (err) {
          // Gitea stayed unreachable through every attempt: the command fails saying so, never hangs.
          if (ctx.job.attemptsMade + 1 >= (ctx.job.opts.attempts ?? 1) || (err as { permanent?: boolean }).permanent)
            await failPublish(deps, data.taskId, err);
          throw err;
        }
    }
  };
}
