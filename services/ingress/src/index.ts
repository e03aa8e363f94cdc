export { ingressService } from "./ingress.service.ts";
