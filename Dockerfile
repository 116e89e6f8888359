# emr-bridge container image, on Node.js 24 (the project's own; package.json's engines). The build stage
# installs the production dependencies with `npm ci --omit=dev`; nothing is compiled (better-sqlite3 ships
# prebuilt N-API binaries in its package), so the image carries no python, make or g++. tsx is a runtime
# dependency, since the TypeScript sources run through it with no build step. The runtime stage takes only
# node_modules and the sources, runs as the unprivileged `node` user (uid 1000), and keeps its data in /data.
#
# Its default command is the zero-configuration demo (adapter + bundled simulator + bundled FHIR server on
# 3000, 3001, 3002, reachable from outside through HOST=0.0.0.0). NODE_ENV is deliberately not production
# here, since production refuses every bundled part: a production container sets NODE_ENV=production together
# with the service, the EMR and the admin token, its secrets as files named by `<NAME>_FILE` (docs/containers.md,
# "A production container"). `emr-bridge` is on the PATH: `docker exec <container> emr-bridge backup`,
# `docker run --rm … emr-bridge migrate` (not `npx emr-bridge`, which tries to link /app into the node user's
# npm cache and fails there).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Behind a proxy that inspects TLS (as many hospital networks do), npm must trust that proxy's CA: give it as a
# build secret, which never lands in a layer: `docker build --secret id=ca,src=/path/to/ca-bundle.pem .`
# (podman build takes the same flag). Without it, npm trusts Node's own CAs.
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi \
 && npm ci --omit=dev \
 && npm cache clean --force
COPY tsconfig.json ./
COPY bin bin
COPY src src
COPY db db
COPY samples samples

FROM node:24-bookworm-slim
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
# The volume's mount point must belong to `node` before the volume is first made from it; the command goes on
# the PATH for every user (bin/emr-bridge.js starts with `#!/usr/bin/env node` and is executable).
RUN mkdir -p /data && chown node:node /data \
 && chmod 0755 /app/bin/emr-bridge.js \
 && ln -s /app/bin/emr-bridge.js /usr/local/bin/emr-bridge
USER node
EXPOSE 3000 3001 3002
VOLUME ["/data"]
# Alive, not ready: /healthz answers 200 while the process serves HTTP. Readiness (/readyz: the database takes
# a write, the workers run) is the orchestrator's readiness probe and the balancer's check, never a restart
# reason: a PostgreSQL outage makes every replica not ready at once, and restarting them all would not help.
# No curl in the slim image, so Node asks.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# SIGTERM (docker stop, a rollout) stops it gracefully: it stops taking work, finishes what is in flight (each
# call bounded by FHIR_TIMEOUT_MS and SERVICE_TIMEOUT_MS, 10 s by default) and hands back the rest. Give it
# 30 s (`docker stop -t 30`, compose's stop_grace_period) rather than Docker's default 10.
STOPSIGNAL SIGTERM
CMD ["node", "bin/emr-bridge.js", "serve"]
