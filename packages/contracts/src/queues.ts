/**
 * Queue names are contracts between deployed services. Renaming one strands every job already
 * waiting under the old name, so add a new queue and drain the old one instead.
 */
export const QUEUE = {
  intake: "intake",
  analyst: "analyst",
  dev: "dev",
  review: "review",
  postmortem: "postmortem",
  notify: "notify",
} as const;

export type QueueName = (typeof QUEUE)[keyof typeof QUEUE];

export const QUEUE_NAMES: readonly QueueName[] = Object.values(QUEUE);
