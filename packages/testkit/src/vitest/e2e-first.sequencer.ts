import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * With no durations from an earlier run (a fresh clone, as in CI) vitest starts the largest files
 * first; the slow ones are the end-to-end files (`*.e2e.test.ts`: processes, opencode, minutes),
 * whatever their size, so this starts them first and lets the quick files fill the gaps at the
 * end, instead of one long file running alone after everything else. Once vitest has durations
 * (its results cache), its own order stands: failed first, then slowest first.
 */
export default class E2eFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const timed = (spec: TestSpecification) =>
      this.ctx.cache.getFileTestResults(`${spec.project.name}:${relative(root, spec.moduleId)}`) !== undefined;
    if (sorted.some(timed)) return sorted;
    const isE2e = (spec: TestSpecification) => spec.moduleId.endsWith(".e2e.test.ts");
    return [...sorted.filter(isE2e), ...sorted.filter((spec) => !isE2e(spec))];
  }
}
