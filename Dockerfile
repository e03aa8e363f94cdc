# One image for every service; the command picks which one runs (see docker-compose.yml, k8s/).
# Node runs the compiled JavaScript directly, as a child of tini, so SIGTERM reaches the service.
FROM node:20-bookworm-slim AS base
RUN apt-get update \
  && apt-get install -y --no-install-recommends git ca-certificates tini \
  && rm -rf /var/lib/apt/lists/* \
  && npm install --global pnpm@10.34.9
WORKDIR /app

# Dependencies from the manifests alone (cached until a manifest or the lockfile changes). The
# lifecycle scripts (the root postinstall generates the Prisma client from the sources, opencode-ai
# places its binary) run in the next stage, once the sources are there.
FROM base AS deps
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json ./
COPY packages/ packages/
COPY services/ services/
RUN find packages services -type f ! -name package.json -delete \
  && pnpm install --frozen-lockfile --ignore-scripts

FROM base AS build
COPY --from=deps /app /app
COPY . .
RUN pnpm rebuild \
  && pnpm db:generate \
  && pnpm build \
  && mkdir -p deploy/opencode/agent && cp agents/*.md deploy/opencode/agent/ \
  && mkdir -p /workspaces && chown node:node /workspaces

FROM build
# Two glibc malloc arenas instead of one per thread (V8's background threads): measured ~12 MB less
# RSS for the idle all-in-one (README).
ENV NODE_ENV=production WORKSPACE_DIR=/workspaces MALLOC_ARENA_MAX=2
USER node
ENTRYPOINT ["/usr/bin/tini", "--"]
# The all-in-one's young generation is capped at 1 MB semi-spaces (V8's default, 16 MB, is reached
# while start-up loads the modules and is never given back while idle: ~30 MB of RSS; see README).
CMD ["node", "--max-semi-space-size=1", "services/all-in-one/dist/main.js"]
