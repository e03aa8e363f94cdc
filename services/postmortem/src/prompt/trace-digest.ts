/** The part of a stored agent run the postmortem reads. */
export interface TraceForDigest {
  id: number;
  agent: string;
  round: number | null;
  outcome: string;
  prompt: string;
  output: string | null;
  error: string | null;
  model: string | null;
  tokensInput: number;
  tokensOutput: number;
  tokensReasoning: number;
  cost: number;
  startedAt: Date;
  endedAt: Date | null;
}

/** Below this, a text is not worth cutting into head and tail. */
const MIN_SLICE = 160;

/**
 * Keeps the head and the tail of a long text (the tail holds an agent's final words, the head its
 * task), marking what was cut. The result is at most `max` characters.
 */
export function trimMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max < MIN_SLICE) return `${text.slice(0, Math.max(0, max - 1))}…`;
  const marker = (cut: number) => `\n…[${cut} characters cut]…\n`;
  const room = max - marker(text.length).length;
  const head = Math.floor(room / 3);
  const tail = room - head;
  return `${text.slice(0, head)}${marker(text.length - head - tail)}${text.slice(text.length - tail)}`;
}

function headerOf(trace: TraceForDigest): string {
  const seconds = trace.endedAt ? Math.round((trace.endedAt.getTime() - trace.startedAt.getTime()) / 1000) : null;
  const parts = [
    `run ${trace.id}: ${trace.agent}`,
    trace.round === null ? null : `round ${trace.round}`,
    `outcome ${trace.outcome}`,
    seconds === null ? "did not finish" : `${seconds}s`,
    `tokens ${trace.tokensInput + trace.tokensOutput + trace.tokensReasoning}`,
    `cost $${trace.cost.toFixed(4)}`,
    trace.model ? `model ${trace.model}` : null,
  ];
  const head = `### ${parts.filter(Boolean).join(", ")}`;
  return trace.error ? `${head}\nerror: ${trace.error.slice(0, 500)}` : head;
}

/** Splits `room` characters between a prompt and an output, favouring the output (what happened). */
function split(prompt: string, output: string, room: number): { prompt: number; output: number } {
  if (prompt.length + output.length <= room) return { prompt: prompt.length, output: output.length };
  const outputRoom = Math.min(output.length, Math.max(Math.ceil(room * 0.6), room - prompt.length));
  return { prompt: Math.min(prompt.length, room - outputRoom), output: outputRoom };
}

/**
 * The task's runs as text for the postmortem prompt, with prompts and outputs together within
 * `budgetChars`. Every run keeps its header line (agent, round, outcome, duration, error); the
 * bodies are given out newest first: the latest run (usually the one that failed) gets up to
 * half of the budget, each older run up to half of what is left, the oldest what remains; runs
 * left with too little show their header only.
 */
export function digestTraces(traces: readonly TraceForDigest[], budgetChars: number): string {
  if (traces.length === 0) return "(no agent runs were recorded)";
  const bodies = new Map<number, string>();
  let left = budgetChars;
  const newestFirst = [...traces].reverse();
  newestFirst.forEach((trace, i) => {
    const room = i === newestFirst.length - 1 ? left : Math.max(Math.floor(left / 2), Math.min(left, MIN_SLICE * 2));
    if (room < MIN_SLICE) return;
    const output = trace.output ?? "";
    const alloc = split(trace.prompt, output, room);
    const prompt = trimMiddle(trace.prompt, alloc.prompt);
    const answer = output === "" ? "(none)" : trimMiddle(output, alloc.output);
    bodies.set(trace.id, `prompt:\n${prompt}\noutput:\n${answer}`);
    left -= alloc.prompt + alloc.output;
  });
  return traces
    .map((trace) => `${headerOf(trace)}\n${bodies.get(trace.id) ?? "(prompt and output left out: over the budget)"}`)
    .join("\n\n");
}
