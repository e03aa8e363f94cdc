import type { GiteaSweepCursor } from "../../generated/client.ts";
import type { DbClient } from "../database.ts";

/** Where the sweep for missed `/agent` comments stopped, per repository (G1). */
export class GiteaSweepCursorRepository {
  constructor(private readonly db: DbClient) {}

  find(repoOwner: string, repoName: string): Promise<GiteaSweepCursor | null> {
    return this.db.giteaSweepCursor.findUnique({ where: { repoOwner_repoName: { repoOwner, repoName } } });
  }

  save(cursor: {
    repoOwner: string;
    repoName: string;
    lastCommentId: number | bigint | null;
    lastCommentAt: Date | null;
  }) {
    const { repoOwner, repoName, lastCommentId, lastCommentAt } = cursor;
    const data = { lastCommentId, lastCommentAt, sweptAt: new Date() };
    return this.db.giteaSweepCursor.upsert({
      where: { repoOwner_repoName: { repoOwner, repoName } },
      create: { repoOwner, repoName, ...data },
      update: data,
    });
  }
}
