import { createLogger, type Logger } from "@ratatoskr/runtime";
import { Writable } from "node:stream";

/** An ingress logger at info whose JSON lines are kept: parsed in `lines`, as written in `raw`. */
export function capturedLogger(): { logger: Logger; lines: Array<Record<string, unknown>>; raw: string[] } {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      raw.push(chunk.toString());
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ service: "ingress", level: "info", destination }), lines, raw };
}
