#!/usr/bin/env node
// The compose healthcheck of every service: exits 0 when this container's service answers
// /health/ready on HTTP_PORT, 1 otherwise (a script, so the check is one plain command).
const port = process.env.HTTP_PORT || "8080";
fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(2500) }).then(
  (response) => process.exit(response.ok ? 0 : 1),
  () => process.exit(1),
);
