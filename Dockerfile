# One image for every service; the command picks which one runs.
FROM node:20-bookworm-slim AS base
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates && rm -rf /var/lib/apt/lists/* \
  && npm install --global pnpm@10.34.9
WORKDIR /app

FROM base AS deps
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json ./
COPY packages/ packages/
COPY services/ services/
RUN find packages services -type f ! -name package.json -delete \
  && pnpm install --frozen-lockfile

FROM base
COPY --from=deps /app /app
COPY . .
RUN pnpm install --frozen-lockfile --offline \
  && mkdir -p deploy/opencode/agent && cp agents/*.md deploy/opencode/agent/
USER node
ENV NODE_ENV=production
CMD ["pnpm", "start"]
