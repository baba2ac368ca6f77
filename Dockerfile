# syntax=docker/dockerfile:1
# The server in a container (docs/guides/deployment.md "Containers"). The build stage compiles
# dist/ with the dev dependencies; the runtime stage gets only the production
# dependencies, dist/, the entrypoints and the bundled demo app, which it serves unless
# APP_ROOT names another app root (copied in by an image built FROM this one, or mounted).
#
#   docker build -t counterpart .
#   docker run --rm -p 8080:8080 -e APP_SESSION_SECRET="$(openssl rand -base64 48)" counterpart

# Pin a digest (node:20-bookworm-slim@sha256:…) for builds that must repeat exactly.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /build
COPY package.json package-lock.json ./
# Scripts off: `prepare` would build before src/ is here; the build runs once, below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.mjs ./scripts/build.mjs
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
WORKDIR /opt/counterpart
COPY package.json package-lock.json ./
# Scripts off here too: `prepare` needs TypeScript, a dev dependency. esbuild runs from
# its platform package without its install script.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /build/dist ./dist
COPY index.js cluster-index.js LICENSE ./
COPY assets ./assets
COPY demo ./demo
# Inside a container the server must listen on every interface (its default is loopback).
ENV APP_HOST=0.0.0.0 \
    APP_PORT=8080
EXPOSE 8080
# The base image's `node` user, by number: Kubernetes' runAsNonRoot can only verify a
# numeric one. The files above stay root's, so the server cannot change its own code.
USER 1000:1000
# For docker and compose; Kubernetes ignores it and uses the Deployment's probes. Liveness,
# not readiness: a Redis outage must not make an orchestrator restart every container.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.APP_PORT || 8080) + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1, in exec form: SIGTERM reaches the server, which drains and exits 0
# (npm or a shell in between would not pass it on, or would exit before the drain ends).
CMD ["node", "index.js"]
