// Stop signals first, before the rest is loaded: a Ctrl-C while modules load is a stop too.
import { bufferStopSignals } from "@ratatoskr/runtime/stop-signals";

const signals = bufferStopSignals();
const [{ runServiceMain }, { devService }] = await Promise.all([import("@ratatoskr/service-host"), import("./dev.service.ts")]);
await runServiceMain({ name: "dev", services: [devService] }, undefined, signals);
