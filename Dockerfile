# The Ratchet image: its default command runs a worker; docker-compose.yml runs the API from the same image
# (`node dist/cli/main.js api`).
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-slim
# The exec toolbox runs commands in a bubblewrap sandbox (tools.exec.sandbox). Unprivileged, it needs user
# namespaces: Docker's default seccomp profile refuses them, so run with a profile that allows them (Chromium's
# own sandbox, for the browser toolbox, needs them too). Chromium is Debian's: nothing is downloaded at run time.
RUN apt-get update \
  && apt-get install -y --no-install-recommends bubblewrap git chromium \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# The workspace of the filesystem, search, exec and git toolboxes (tools.workspace, unless the config sets it):
# a directory the `node` user owns, outside /app/config, which compose mounts read-only.
ENV NODE_ENV=production RATCHET_WORKSPACE=/workspace
RUN mkdir -p /workspace && chown node:node /workspace
VOLUME /workspace
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
USER node
CMD ["node", "dist/worker/main.js", "--config", "/app/config/demo.yaml"]
