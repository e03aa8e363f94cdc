import { setImmediate as nextTurn } from "node:timers/promises";

/**
 * Bounds how many updates are handled at once, and lets intake go first: a handling starts only
 * after the event loop has served the I/O already waiting (the webhook's requests), so a backlog
 * being worked off never holds up the answers to new updates. Handlers that touch the database
 * take its connections only a few at a time.
 */
export class HandlingSlots {
  private free: number;
  private readonly queue: Array<() => void> = [];

  constructor(size: number) {
    this.free = size;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    try {
      await nextTurn();
      return await work();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.free++;
    }
  }
}
