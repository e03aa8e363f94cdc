import type { OpencodeApi } from "../api/opencode-api.ts";
import { sameModel, type ModelRef } from "../model/model-ref.ts";
import type { LocationWarmup } from "./location-warmup.ts";

/**
 * Whether a prompt taken in silence may go once more: a server restarted since this process warmed
 * the directory (a recycled opencode, a restarted container) has not loaded that location, so the
 * prompt went unanswered and the model was never asked. True once the location is loaded again and
 * lists the run's model; false when it does not (an unknown model stays silent: no second try).
 */
export async function reloadedAfterSilence(
  deps: { api: OpencodeApi; warmup: LocationWarmup },
  directory: string,
  expected: ModelRef | undefined,
  signal: AbortSignal | undefined,
  deadline: number,
): Promise<boolean> {
  deps.warmup.forget(directory, expected?.providerID);
  await deps.warmup.ready(directory, expected?.providerID, signal, deadline);
  const models = await deps.api.models(directory, signal).catch(() => []);
  return expected ? models.some((m) => sameModel(m, expected)) : models.length > 0;
}
