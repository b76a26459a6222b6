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
HEALTHCHECK --interval=5s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "const e=process.env,p=e.HEALTH_PORT||e.OPS_PORT||e.PORT||3000;fetch('http://127.0.0.1:'+p+(e.HEALTH_PATH||'/readyz'),{signal:AbortSignal.timeout(2500)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "services/gateway/dist/main.js"]
