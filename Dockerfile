# One image for every service; the command picks the service (see docker-compose.yml).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY lib/package.json lib/
COPY services/gateway/package.json services/gateway/
COPY services/instances/package.json services/instances/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/proto proto
COPY --from=build /app/lib/package.json lib/
COPY --from=build /app/lib/dist lib/dist
COPY --from=build /app/services/gateway/package.json services/gateway/
COPY --from=build /app/services/gateway/dist services/gateway/dist
COPY --from=build /app/services/instances/package.json services/instances/
COPY --from=build /app/services/instances/dist services/instances/dist
USER node
CMD ["node", "services/gateway/dist/main.js"]
