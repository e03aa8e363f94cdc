// Stop signals first, before the rest is loaded: a Ctrl-C while modules load is a stop too.
import { bufferStopSignals } from "@ratatoskr/runtime/stop-signals";

const signals = bufferStopSignals();
const [{ runServiceMain }, { analystService }] = await Promise.all([import("@ratatoskr/service-host"), import("./analyst.service.ts")]);
await runServiceMain({ name: "analyst", services: [analystService] }, undefined, signals);
