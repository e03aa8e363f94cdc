/** Starts what may start for an issue/PR; `joined`: the command that joined its line, if that is all that changed. */
export type Dispatch = (targetKey: string, joined: number | undefined) => Promise<number[]>;

interface Waiting {
  joined: number | undefined;
  done: Promise<number[]>;
  resolve(started: number[]): void;
  reject(error: unknown): void;
}

/**
 * Dispatches of one issue/PR asked for while one runs in this process wait and go as one more
 * run: a burst of commands joining a line reads it twice instead of once per command. Each asker
 * is answered by a run that began after it asked, so none misses what changed before it asked.
 * The merged run refreshes positions from the earliest command that joined, or the whole line if
 * any asker wanted that. Across processes the dispatch lock still serializes the runs.
 */
export function coalesceDispatches(dispatch: Dispatch): Dispatch {
  const waitingFor = new Map<string, Waiting | undefined>();

  function begin(targetKey: string, joined: number | undefined): Promise<number[]> {
    const run = dispatch(targetKey, joined);
    const afterRun = () => {
      const next = waitingFor.get(targetKey);
      if (!next) {
        waitingFor.delete(targetKey);
        return;
      }
      waitingFor.set(targetKey, undefined);
      begin(targetKey, next.joined).then(next.resolve, next.reject);
    };
    run.then(afterRun, afterRun);
    return run;
  }

  return (targetKey, joined) => {
    if (!waitingFor.has(targetKey)) {
      waitingFor.set(targetKey, undefined);
      return begin(targetKey, joined);
    }
    const waiting = waitingFor.get(targetKey);
    if (waiting) {
      waiting.joined = earliest(waiting.joined, joined);
      return waiting.done;
    }
    let resolve!: (started: number[]) => void;
    let reject!: (error: unknown) => void;
    const done = new Promise<number[]>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    waitingFor.set(targetKey, { joined, done, resolve, reject });
    return done;
  };
}

/** No `joined` means the whole line is refreshed, which covers any single command joining. */
function earliest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : Math.min(a, b);
}
