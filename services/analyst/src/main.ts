import { startHost } from "@ratatoskr/service-host";
import { analystService } from "./analyst.service.ts";

await startHost({ name: "analyst", services: [analystService] });
