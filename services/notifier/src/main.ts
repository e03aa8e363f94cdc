import { runServiceMain } from "@ratatoskr/service-host";
import { notifierService } from "./notifier.service.ts";

await runServiceMain({ name: "notifier", services: [notifierService] });
