import { reply, type ScriptedModel } from "@ratatoskr/testkit";

export const ANALYST = "You are the analyst of Ratatoskr";

/**
 * The backup request a person makes on Telegram, scripted on the model: told about a "backup",
 * the analyst asks which database and how often; told "postgres, nightly", it drafts the nightly
 * database backup of acme/shop.
 */
export function scriptBackupDialogue(model: ScriptedModel): void {
  model.addRule({
    match: { systemIncludes: ANALYST, promptIncludes: "postgres, nightly" },
    reply: [
      reply.json({
        phase: "propose",
        draft: {
          title: "Nightly database backup",
          goal: "Back up the shop database every night.",
          repos: ["acme/shop"],
          why: "We lost data last week.",
          acceptanceCriteria: ["a backup runs at 02:00", "backups older than 7 days are removed"],
        },
      }),
    ],
  });
  model.addRule({
    match: { systemIncludes: ANALYST, promptIncludes: "backup" },
    reply: [reply.json({ phase: "ask", questions: ["Which database?", "How often?"] })],
  });
}
