import { createHmac, randomUUID } from "node:crypto";

/** One webhook delivery as the fake made it (Gitea's "Recent Deliveries"). */
export interface FakeDelivery {
  uuid: string;
  event: string;
  eventType: string;
  body: string;
  signature: string;
  /** HTTP status the receiver answered; undefined while in flight or when dropped/unreachable. */
  status?: number;
  /** The receiver's answer body. */
  response?: string;
  dropped: boolean;
  error?: string;
}

export interface WebhookTarget {
  url: string;
  secret: string;
}

/** Go's json.MarshalIndent: two-space indent, `<`, `>`, `&` escaped as Gitea sends them. */
export function giteaJson(payload: unknown): string {
  return JSON.stringify(payload, null, 2)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026");
}

/**
 * Delivers webhooks the way Gitea does: one POST per hook with X-Gitea-Event, X-Gitea-Event-Type,
 * X-Gitea-Delivery (a new UUID each time) and X-Gitea-Signature (HMAC-SHA256 hex of the body),
 * never retried. `dropNext(n)` loses the next n deliveries (the receiver was down).
 */
export class WebhookSender {
  readonly deliveries: FakeDelivery[] = [];
  private readonly targets: WebhookTarget[] = [];
  private toDrop = 0;
  private readonly inFlight = new Set<Promise<unknown>>();

  addTarget(target: WebhookTarget): void {
    this.targets.push(target);
  }

  dropNext(count = 1): void {
    this.toDrop += count;
  }

  /** Sends one event to every target; resolves when all answered. */
  async send(event: string, eventType: string, payload: unknown): Promise<FakeDelivery[]> {
    const body = giteaJson(payload);
    return Promise.all(this.targets.map((target) => this.post(target, event, eventType, body)));
  }

  /** Gitea's "Redeliver": the stored body again, same signature, new delivery UUID. */
  redeliver(uuid: string): Promise<FakeDelivery> {
    const old = this.deliveries.find((d) => d.uuid === uuid);
    const target = this.targets[0];
    if (!old || !target) throw new Error(`no delivery ${uuid}`);
    return this.post(target, old.event, old.eventType, old.body);
  }

  /** Posts a body exactly as given (tests: forged signatures, odd payloads). */
  async postRaw(headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
    const target = this.targets[0];
    if (!target) throw new Error("no webhook target");
    const res = await fetch(target.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });
    return { status: res.status, text: await res.text() };
  }

  /** Waits for deliveries still in flight (fire-and-forget ones from API calls). */
  async settle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private post(target: WebhookTarget, event: string, eventType: string, body: string): Promise<FakeDelivery> {
    const signature = createHmac("sha256", target.secret).update(body).digest("hex");
    const delivery: FakeDelivery = { uuid: randomUUID(), event, eventType, body, signature, dropped: false };
    this.deliveries.push(delivery);
    if (this.toDrop > 0) {
      this.toDrop--;
      delivery.dropped = true;
      return Promise.resolve(delivery);
    }
    const run = (async () => {
      try {
        const res = await fetch(target.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-gitea-delivery": delivery.uuid,
            "x-gitea-event": event,
            "x-gitea-event-type": eventType,
            "x-gitea-signature": signature,
            "x-gogs-delivery": delivery.uuid,
            "x-gogs-event": event,
            "x-gogs-signature": signature,
            "x-hub-signature-256": `sha256=${signature}`,
          },
          body,
        });
        delivery.status = res.status;
        delivery.response = await res.text();
      } catch (err) {
        delivery.error = err instanceof Error ? err.message : String(err);
      }
      return delivery;
    })();
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
    return run;
  }
}
