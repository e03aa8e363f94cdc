export { postmortemService } from "./postmortem.service.ts";
