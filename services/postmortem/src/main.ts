import { startHost } from "@ratatoskr/service-host";
import { postmortemService } from "./postmortem.service.ts";

await startHost({ name: "postmortem", services: [postmortemService] });
