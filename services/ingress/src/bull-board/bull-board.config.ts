import { ConfigError, envBoolean, envString, loadConfig } from "@ratatoskr/runtime";

const bullBoardSchema = {
  bullBoard: {
    disabled: envBoolean("BULL_BOARD_DISABLED", {
      default: false,
      description: "Set to true to run ingress without Bull Board",
    }),
    user: envString("BULL_BOARD_USER", { default: "admin", description: "Bull Board basic-auth user" }),
    password: envString("BULL_BOARD_PASSWORD", {
      optional: true,
      secret: true,
      description: "Bull Board basic-auth password; required unless BULL_BOARD_DISABLED=true",
    }),
    readOnly: envBoolean("BULL_BOARD_READ_ONLY", {
      default: false,
      description: "Show the queues without retry/remove/clean actions",
    }),
  },
};

export type BullBoardConfig =
  { enabled: false } | { enabled: true; user: string; password: string; readOnly: boolean };

/** The board is never served without credentials: either a password or an explicit opt-out. */
export function loadBullBoardConfig(env: NodeJS.ProcessEnv): BullBoardConfig {
  const { bullBoard } = loadConfig(bullBoardSchema, env);
  if (bullBoard.disabled) return { enabled: false };
  if (!bullBoard.password) {
    throw new ConfigError([
      {
        name: "BULL_BOARD_PASSWORD",
        message: "is required to serve Bull Board (or set BULL_BOARD_DISABLED=true to run without it)",
      },
    ]);
  }
  return { enabled: true, user: bullBoard.user, password: bullBoard.password, readOnly: bullBoard.readOnly };
}

export const BULL_BOARD_CONFIG_SCHEMA = bullBoardSchema;
