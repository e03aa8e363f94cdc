# One image for every service and for opencode; the command picks which one runs (see
# docker-compose.yml, k8s/). Built by `scripts/containers.sh image` (CI and the Gitea workflow).
#
# NODE_IMAGE: the base. The official image for everyone; machines that reach no image registry
# build a stand-in (scripts/containers.sh bases) and pass its name.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS base
# git: the services clone and push, the agents' tools read history. tini: PID 1, forwards signals
# and reaps. bubblewrap: the sandbox opencode runs the agents' tools in.
RUN apt-get update \
  && apt-get install -y --no-install-recommends git ca-certificates tini bubblewrap \
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/*
WORKDIR /app

# Everything, built: dev dependencies, the Prisma client, tsc's output. Steps that reach the npm
# registry trust the CA bundle given as the optional build secret `ca-certificates` (needed where
# TLS to the registry is re-signed by a proxy; the official registry needs none).
FROM base AS build
RUN --mount=type=secret,id=ca-certificates,target=/run/secrets/ca.crt \
  if [ -f /run/secrets/ca.crt ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca.crt; fi \
  && npm install --global pnpm@10.34.9
# The packages of the lockfile, fetched into pnpm's store: cached until the lockfile changes.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
COPY patches ./patches
RUN --mount=type=secret,id=ca-certificates,target=/run/secrets/ca.crt \
  if [ -f /run/secrets/ca.crt ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca.crt; fi \
  && pnpm fetch
COPY . .
RUN pnpm install --offline --frozen-lockfile \
  && pnpm build \
  && cp "$(ls -d node_modules/.pnpm/opencode-linux-x64@*/node_modules/opencode-linux-x64/bin/opencode)" /usr/local/bin/opencode \
  && opencode --version

# What the image ships, assembled in /prod: production dependencies only (no test kit, no dev
# tools), the compiled dist of each package and service, the generated Prisma client (compiled),
# the migrations, the agents' definitions in opencode's config directory, and the init
# container's script. No sources, no tests. pnpm's patches are applied by the install, then removed.
RUN mkdir -p /prod \
  && cp -r package.json pnpm-lock.yaml pnpm-workspace.yaml patches /prod/ \
  && for dir in packages/* services/*; do \
       if [ "$dir" != packages/testkit ] && [ -f "$dir/package.json" ]; then \
         mkdir -p "/prod/$dir" && cp "$dir/package.json" "/prod/$dir/"; \
         if [ -d "$dir/dist" ]; then cp -r "$dir/dist" "/prod/$dir/"; fi; \
       fi; \
     done \
  && mkdir -p /prod/packages/db/generated \
  && (cd packages/db/generated && find . -name '*.js' -exec cp --parents {} /prod/packages/db/generated/ \;) \
  && mkdir -p /prod/prisma && cp -r prisma/migrations /prod/prisma/ \
  && mkdir -p /prod/deploy/opencode/agent \
  && cp deploy/wait-for-migrations.mjs deploy/healthcheck.mjs /prod/deploy/ \
  && cp -r deploy/opencode/. /prod/deploy/opencode/ && rm -f /prod/deploy/opencode/README.md \
  && cp agents/*.md /prod/deploy/opencode/agent/
WORKDIR /prod
RUN pnpm install --offline --prod --frozen-lockfile --ignore-scripts \
  && rm -r /prod/patches \
  && node /app/scripts/prune-production.mjs /prod
WORKDIR /app

# Test image (`--target testkit`): the checkout, built, with its dev dependencies, for the fakes
# the container tests run beside the real image (fake Telegram, fake Gitea, the scripted model).
# The production image below never contains any of it.
FROM build AS testkit
USER node
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--conditions=ratatoskr-source", "--import", "tsx", "test/ops/containers/fakes.main.ts"]

# The production image (the default target). SERVICE_VERSION: what the services report (logs,
# metrics); the Gitea workflow passes the git tag.
FROM base AS production
ARG SERVICE_VERSION=dev
COPY --from=build /usr/local/bin/opencode /usr/local/bin/opencode
COPY --from=build /prod /app
# The workspace volume and opencode's data volume start out owned by the image's user.
# opencode's config directories stay root's: where it may write one, opencode downloads and
# installs its plugin SDK (64 MB of npm packages, ~25 s of CPU) there at its first session; it
# needs none, and its configuration is never the agent's to change.
RUN mkdir -p /workspaces /home/node/.local/share/opencode /home/node/.config/opencode \
  && chown node:node /workspaces /home/node/.local /home/node/.local/share /home/node/.local/share/opencode
# Two glibc malloc arenas instead of one per thread (V8's background threads): measured ~12 MB less
# RSS for the idle all-in-one (README).
# OPENCODE_BIN: the real opencode binary, for deploy/opencode's launcher.
ENV NODE_ENV=production SERVICE_VERSION=${SERVICE_VERSION} WORKSPACE_DIR=/workspaces MALLOC_ARENA_MAX=2 OPENCODE_BIN=/usr/local/bin/opencode
USER node
# tini is PID 1; every command (a service's node, opencode) is exec'd by it directly, never through
# a shell, pnpm or a node_modules/.bin wrapper, so SIGTERM reaches the process that handles it.
ENTRYPOINT ["/usr/bin/tini", "--"]
# The all-in-one's young generation is capped at 1 MB semi-spaces (V8's default, 16 MB, is reached
# while start-up loads the modules and is never given back while idle: ~30 MB of RSS; see README).
CMD ["node", "--max-semi-space-size=1", "services/all-in-one/dist/main.js"]
