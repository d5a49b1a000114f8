# The plan worker (and the one-shot search-attribute setup) for docker-compose.yml.
FROM node:20-bookworm-slim

# better-sqlite3 compiles its native module when no prebuilt binary matches. bubblewrap is the box every command
# of a plan runs in (docs/decisions/0009-command-isolation.md); without it the worker refuses those commands.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ bubblewrap \
  && rm -rf /var/lib/apt/lists/*

# The worker runs as the image's unprivileged `node` user: a boxed command keeps the worker's user id, so running
# as root would let it read files only root may read wherever the box shows them. Its sandboxes go to
# /home/node/.cache/cleveragents/sandboxes, its database to the /data volume.
RUN mkdir -p /app /data && chown node:node /app /data
USER node
WORKDIR /app
COPY --chown=node:node package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY --chown=node:node . .
RUN node_modules/.bin/prisma generate

ENV DATABASE_URL=file:/data/agents.db
VOLUME /data

# Migrations run at start, not build: the database lives on the volume, not in the image.
CMD ["sh", "-c", "node_modules/.bin/prisma migrate deploy && exec node_modules/.bin/tsx worker/main.ts"]
