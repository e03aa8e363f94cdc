export { reviewerService } from "./reviewer.service.ts";
