import { z } from "zod";

/** The dev agent's closing JSON (see agents/dev.md). */
export const devReportSchema = z.object({
  summary: z.string(),
  testsRun: z.string().optional(),
  done: z.boolean(),
});
export type DevReport = z.infer<typeof devReportSchema>;
