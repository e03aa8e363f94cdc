import { startHost } from "@ratatoskr/service-host";
import { notifierService } from "./notifier.service.ts";

await startHost({ name: "notifier", services: [notifierService] });
