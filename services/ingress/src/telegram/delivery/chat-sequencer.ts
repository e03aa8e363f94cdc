/**
 * Runs work for one chat strictly one after another, in the order `run` was called, while
 * different chats proceed concurrently (T5). Within one process this keeps a burst of messages
 * in Telegram's order; across replicas the task's row lock in applyTransition does.
 */
export class ChatSequencer {
  private readonly tails = new Map<number | string, Promise<void>>();

  /** Resolves or rejects with `work`'s own outcome; a failure never blocks the chat's next item. */
  run(key: number | string, work: () => Promise<void>): Promise<void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(work);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Chats with work queued or running (for tests and shutdown logs). */
  get busyChats(): number {
    return this.tails.size;
  }

  /** Waits until everything queued so far has finished. */
  async idle(): Promise<void> {
    while (this.tails.size > 0) await Promise.all(this.tails.values());
  }
}
