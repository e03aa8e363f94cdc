import { runServiceMain } from "@ratatoskr/service-host";
import { ingressService } from "./ingress.service.ts";

await runServiceMain({ name: "ingress", services: [ingressService] });
