# One image for every service; the command picks the service (see docker-compose.yml):
#   node services/{gateway,instances,sessions,webhooks}/dist/main.js
# BASE_IMAGE: any Debian-like image with Node 20 and npm, and a `node` user (the official image by default; the
# container tests pass one built on the machine, as they cannot pull).
ARG BASE_IMAGE=node:20-bookworm-slim

FROM ${BASE_IMAGE} AS build
WORKDIR /app
# The manifests first, so the dependency layer is reused while only sources change.
COPY package.json package-lock.json ./
COPY lib/package.json lib/
COPY services/gateway/package.json services/gateway/
COPY services/instances/package.json services/instances/
COPY services/sessions/package.json services/sessions/
COPY services/webhooks/package.json services/webhooks/
COPY clients/api/package.json clients/api/
# No dependency install scripts (package.json allowScripts says none is needed; they would only try native builds).
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM ${BASE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and read-only for the `node` user the services run as.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/proto proto
COPY --from=build /app/lib/package.json lib/
COPY --from=build /app/lib/dist lib/dist
COPY --from=build /app/services/gateway/package.json services/gateway/
COPY --from=build /app/services/gateway/dist services/gateway/dist
COPY --from=build /app/services/instances/package.json services/instances/
COPY --from=build /app/services/instances/dist services/instances/dist
COPY --from=build /app/services/sessions/package.json services/sessions/
COPY --from=build /app/services/sessions/dist services/sessions/dist
COPY --from=build /app/services/webhooks/package.json services/webhooks/
COPY --from=build /app/services/webhooks/dist services/webhooks/dist
USER node
# Health = readiness (/readyz: the service can serve, its NATS or backends answer), because compose starts a
# service's dependents only once it is healthy; HEALTH_PATH=/healthz checks liveness only. The backend services
# serve it on OPS_PORT, the gateway on PORT; HEALTH_PORT overrides both.
# The probe is bash's /dev/tcp, not a Node process: `node -e fetch(...)` took 0.23 s of CPU per probe (0.01 s this
# way), a third of a core for 7 containers probed every 5 s; in a compose drill on 2 cores 127 probes in 2 minutes
# missed their 3 s time-out, and a restarted webhooks replica was still "unhealthy" 90 s after its restart.
HEALTHCHECK --interval=5s --timeout=3s --start-period=60s --retries=3 \
  CMD timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/${HEALTH_PORT:-${OPS_PORT:-${PORT:-3000}}}" && printf "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" "${HEALTH_PATH:-/readyz}" >&3 && read -r line <&3 && [[ $line == HTTP/*" 200 "* ]]'
CMD ["node", "services/gateway/dist/main.js"]
