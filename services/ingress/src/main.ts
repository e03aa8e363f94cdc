import { startHost } from "@ratatoskr/service-host";
import { ingressService } from "./ingress.service.ts";

await startHost({ name: "ingress", services: [ingressService] });
