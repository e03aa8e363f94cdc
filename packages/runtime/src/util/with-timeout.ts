export class TimeoutError extends Error {
  override readonly name = "TimeoutError";
}

/** Settles like `promise`, or rejects with TimeoutError after `ms`. The timer never outlives it. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** True when `promise` settled within `ms`, false when the time ran out (it keeps running). */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  try {
    await withTimeout(
      promise.then(
        () => undefined,
        () => undefined,
      ),
      ms,
      "wait",
    );
    return true;
  } catch {
    return false;
  }
}
