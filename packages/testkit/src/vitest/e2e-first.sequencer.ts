import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Longest first, so that no long file starts last and runs alone after everything else. A file's
 * length is its duration in vitest's results cache; a file with none (a fresh clone, as in CI, or
 * a file added since) counts as longest when it is an end-to-end file (`*.e2e.test.ts`: processes,
 * opencode, minutes), whatever its size, and as shortest otherwise. Files that failed last time
 * still go first. vitest's own order falls back to file size for every file as soon as one is
 * unknown, which puts the small, long chaos files at the end.
 */
export default class E2eFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const rank = (spec: TestSpecification): [failed: number, length: number] => {
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${relative(root, spec.moduleId)}`);
      if (cached) return [cached.failed ? 1 : 0, cached.duration];
      return [0, spec.moduleId.endsWith(".e2e.test.ts") ? Number.POSITIVE_INFINITY : -1];
    };
    // vitest's order first (largest first among the unknown): the tie-break of the stable sort.
    const ranked = (await super.sort(files)).map((spec) => ({ spec, rank: rank(spec) }));
    ranked.sort((a, b) => b.rank[0] - a.rank[0] || compareDescending(a.rank[1], b.rank[1]));
    return ranked.map(({ spec }) => spec);
  }
}

function compareDescending(a: number, b: number): number {
  return a === b ? 0 : a > b ? -1 : 1;
}
