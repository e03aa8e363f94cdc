/**
 * Runs many callers' requests as one statement: a request that arrives while a statement is in
 * flight waits for it and goes with the others that arrived meanwhile, so under load one round
 * trip carries many requests and alone a request goes at once. `run` answers each input in order.
 */
export class GroupedStatement<I, O> {
  private waiting: Array<{ input: I; resolve: (output: O) => void; reject: (err: unknown) => void }> = [];
  private running = false;

  constructor(
    private readonly run: (inputs: I[]) => Promise<O[]>,
    private readonly maxGroup = 100,
  ) {}

  submit(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.waiting.length > 0) {
      const group = this.waiting.splice(0, this.maxGroup);
      try {
        const outputs = await this.run(group.map((entry) => entry.input));
        group.forEach((entry, i) => entry.resolve(outputs[i] as O));
      } catch (err) {
        for (const entry of group) entry.reject(err);
      }
    }
    this.running = false;
  }
}
