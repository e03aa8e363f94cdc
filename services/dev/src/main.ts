import { runServiceMain } from "@ratatoskr/service-host";
import { devService } from "./dev.service.ts";

await runServiceMain({ name: "dev", services: [devService] });
