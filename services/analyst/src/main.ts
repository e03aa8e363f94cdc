import { runServiceMain } from "@ratatoskr/service-host";
import { analystService } from "./analyst.service.ts";

await runServiceMain({ name: "analyst", services: [analystService] });
