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
# namespaces: Docker's default seccomp profile refuses them, so run with a profile that allows them.
RUN apt-get update \
  && apt-get install -y --no-install-recommends bubblewrap \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
USER node
CMD ["node", "dist/worker/main.js", "--config", "/app/config/demo.yaml"]
