import { startHost } from "@ratatoskr/service-host";
import { reviewerService } from "./reviewer.service.ts";

await startHost({ name: "reviewer", services: [reviewerService] });
