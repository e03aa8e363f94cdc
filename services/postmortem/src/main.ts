// Stop signals first, before the rest is loaded: a Ctrl-C while modules load is a stop too.
import { bufferStopSignals } from "@ratatoskr/runtime/stop-signals";

const signals = bufferStopSignals();
const [{ runServiceMain }, { postmortemService }] = await Promise.all([import("@ratatoskr/service-host"), import("./postmortem.service.ts")]);
await runServiceMain({ name: "postmortem", services: [postmortemService] }, undefined, signals);
