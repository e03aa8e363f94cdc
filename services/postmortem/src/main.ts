import { runServiceMain } from "@ratatoskr/service-host";
import { postmortemService } from "./postmortem.service.ts";

await runServiceMain({ name: "postmortem", services: [postmortemService] });
