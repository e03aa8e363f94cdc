export { devService } from "./dev.service.ts";
