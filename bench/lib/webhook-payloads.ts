/**
 * What the webhook benches post: Telegram updates (secret header) and Gitea `/agent` comments
 * (HMAC-SHA256 of the body), each with a new id. Pure; the load driver builds them in its own
 * process so the server under test does not pay for it.
 */
import { createHmac } from "node:crypto";

export type WebhookTarget =
  | { kind: "telegram"; url: string; secret: string }
  | { kind: "gitea"; url: string; secret: string; template: Record<string, unknown> };

export interface WebhookRequest {
  body: string;
  headers: Record<string, string>;
}

/** Senders: 200 chats not on the allowlist, so every update is stored and handled (one refusal per chat). */
function telegramRequests(secret: string): () => WebhookRequest {
  let next = 1;
  return () => {
    const id = next++;
    const chat = 900_000 + (id % 200);
    return {
      headers: { "x-telegram-bot-api-secret-token": secret },
      body: JSON.stringify({
        update_id: id,
        message: {
          message_id: id,
          date: 1_700_000_000,
          chat: { id: chat, type: "private" },
          from: { id: chat, is_bot: false, first_name: "Bench" },
          text: `message ${id}: please add a health endpoint to acme/api`,
        },
      }),
    };
  };
}

/** Deliveries built from one real fake-Gitea payload, each a new `/agent plan` comment id. */
function giteaRequests(secret: string, template: Record<string, unknown>): () => WebhookRequest {
  let next = 1_000_000;
  const comment = template["comment"] as Record<string, unknown>;
  return () => {
    const id = next++;
    const body = JSON.stringify({
      ...template,
      comment: { ...comment, id, body: `/agent plan bench ${id}` },
    });
    return {
      headers: {
        "x-gitea-event": "issue_comment",
        "x-gitea-signature": createHmac("sha256", secret).update(body).digest("hex"),
      },
      body,
    };
  };
}

export function webhookRequests(target: WebhookTarget): () => WebhookRequest {
  return target.kind === "telegram"
    ? telegramRequests(target.secret)
    : giteaRequests(target.secret, target.template);
}
