import { runServiceMain } from "@ratatoskr/service-host";
import { reviewerService } from "./reviewer.service.ts";

await runServiceMain({ name: "reviewer", services: [reviewerService] });
