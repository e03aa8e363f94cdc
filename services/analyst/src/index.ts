export { analystService } from "./analyst.service.ts";
