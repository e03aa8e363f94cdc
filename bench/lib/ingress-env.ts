/** The environment of an ingress host under the webhook benches (as main.ts would read it). */
import { DATABASE_URL, REDIS_URL } from "./bench-env.ts";

const common = (schema: string, prefix: string) => ({
  ...process.env,
  DATABASE_URL,
  DATABASE_SCHEMA: schema,
  REDIS_URL,
  QUEUE_PREFIX: prefix,
  LOG_LEVEL: "error",
  HTTP_HOST: "127.0.0.1",
  HTTP_PORT: "0",
  BULL_BOARD_DISABLED: "true",
});

export function telegramIngressEnv(o: {
  schema: string;
  prefix: string;
  telegramUrl: string;
  token: string;
  path: string;
  secret: string;
}): NodeJS.ProcessEnv {
  return {
    ...common(o.schema, o.prefix),
    TELEGRAM_BOT_TOKEN: o.token,
    TELEGRAM_API_ROOT: o.telegramUrl,
    TELEGRAM_ALLOWED_CHAT_IDS: "1",
    TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:9${o.path}`,
    TELEGRAM_WEBHOOK_SECRET: o.secret,
  };
}

/** `intake: false`: the route only (INGRESS_CONCURRENCY=0), the intake worker runs elsewhere. */
export function giteaIngressEnv(o: {
  schema: string;
  prefix: string;
  giteaUrl: string;
  token: string;
  secret: string;
  intake: boolean;
}): NodeJS.ProcessEnv {
  return {
    ...common(o.schema, o.prefix),
    GITEA_URL: o.giteaUrl,
    GITEA_TOKEN: o.token,
    GITEA_WEBHOOK_SECRET: o.secret,
    GITEA_SWEEP_INTERVAL_MS: "0",
    GITEA_STATUS_REFRESH_MS: "0",
    ...(o.intake ? {} : { INGRESS_CONCURRENCY: "0" }),
  };
}
