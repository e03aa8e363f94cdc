// Stop signals first, before the rest is loaded: a Ctrl-C while modules load is a stop too.
import { bufferStopSignals } from "@ratatoskr/runtime/stop-signals";

const signals = bufferStopSignals();
const [{ runServiceMain }, { ingressService }] = await Promise.all([import("@ratatoskr/service-host"), import("./ingress.service.ts")]);
await runServiceMain({ name: "ingress", services: [ingressService] }, undefined, signals);
