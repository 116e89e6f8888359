# emr-bridge container image. The build stage installs dependencies (compiling better-sqlite3 when no
# prebuilt binary fits) and drops the dev ones; tsx is a runtime dependency, since the TypeScript sources run
# through it with no build step. The runtime stage runs as the unprivileged `node` user; data lives in /data.
#
# Its default command is the zero-configuration demo (adapter + bundled simulator + bundled FHIR server on
# 3000, 3001, 3002, reachable from outside through HOST=0.0.0.0). NODE_ENV is deliberately not production
# here, since production refuses every bundled part: a production container sets NODE_ENV=production together
# with SERVICE_BASE_URL, FHIR_BASE_URL, the service's key and secrets, FHIR_AUTH and ADMIN_TOKEN (README,
# "Running in a container"). Backups: `docker exec <container> npx emr-bridge backup` (SQLite online backup).
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci && npm prune --omit=dev && npm cache clean --force
COPY tsconfig.json ./
COPY bin bin
COPY src src
COPY db db
COPY samples samples

FROM node:20-bookworm-slim
ENV HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/package.json package.json
COPY --from=build /app/tsconfig.json tsconfig.json
COPY --from=build /app/bin bin
COPY --from=build /app/src src
COPY --from=build /app/db db
COPY --from=build /app/samples samples
# The volume's mount point must belong to `node` before the volume is first made from it.
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000 3001 3002
VOLUME ["/data"]
# Ready, not only alive: /readyz answers 200 once the database takes a write and the workers run. No curl in
# the slim image, so Node asks.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "bin/emr-bridge.js", "serve"]
