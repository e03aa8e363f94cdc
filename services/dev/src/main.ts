import { startHost } from "@ratatoskr/service-host";
import { devService } from "./dev.service.ts";

await startHost({ name: "dev", services: [devService] });
