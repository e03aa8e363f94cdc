import { analystService } from "@ratatoskr/analyst";
import { devService } from "@ratatoskr/dev";
import { ingressService } from "@ratatoskr/ingress";
import { notifierService } from "@ratatoskr/notifier";
import { postmortemService } from "@ratatoskr/postmortem";
import { reviewerService } from "@ratatoskr/reviewer";
import type { AnyServiceDefinition } from "@ratatoskr/service-host";

/** Every service, in the order they start (ingress last, so intake opens when workers are up). */
export const ALL_SERVICES: readonly AnyServiceDefinition[] = [
  notifierService,
  analystService,
  devService,
  reviewerService,
  postmortemService,
  ingressService,
];
