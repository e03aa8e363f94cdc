// Stop signals first, before the rest is loaded: a Ctrl-C while modules load is a stop too.
import { bufferStopSignals } from "@ratatoskr/runtime/stop-signals";

const signals = bufferStopSignals();
const [{ runServiceMain }, { notifierService }] = await Promise.all([import("@ratatoskr/service-host"), import("./notifier.service.ts")]);
await runServiceMain({ name: "notifier", services: [notifierService] }, undefined, signals);
