# The plan worker and the engine's one-shot jobs (migrations, search-attribute setup) for docker-compose.yml.
FROM node:20-bookworm-slim

# better-sqlite3 compiles its native module when no prebuilt binary matches. bubblewrap is the box every command
# of a plan runs in (docs/decisions/0009-command-isolation.md); without it the worker refuses those commands.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ bubblewrap \
  && rm -rf /var/lib/apt/lists/*

# The worker runs as the image's unprivileged `node` user: a boxed command keeps the worker's user id, so running
# as root would let it read files only root may read wherever the box shows them. Its sandboxes go to
# /home/node/.cache/cleveragents/sandboxes, a SQLite database (when it uses one) to /data.
RUN mkdir -p /app /data && chown node:node /app /data
USER node
WORKDIR /app
COPY --chown=node:node package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY --chown=node:node . .
# Both generated clients, SQLite and PostgreSQL (ADR 0014): DATABASE_URL picks one at run time.
RUN npm run prisma:generate
# bootstrap.js (the CMD) reinstalls node_modules when package-lock.json is newer than the last install. COPY keeps
# the build context's file times, and a cached `npm ci` layer can be older than them though the lock file's content
# is the same (the cache is keyed on content). Marking the install as current stops every container from running
# `npm ci` at start.
RUN touch node_modules/.package-lock.json

# SQLite by default, for a container run on its own (mount a volume at /data). docker-compose.yml sets a PostgreSQL
# DATABASE_URL instead. No VOLUME here: each replica of a scaled worker would get an anonymous volume it never uses.
ENV DATABASE_URL=file:/data/agents.db

# WORKER_METRICS_PORT and WORKER_HEALTH_PORT as docker-compose.yml sets them.
EXPOSE 9464 9465

# The worker, started as `npm run worker` starts it: bootstrap.js gives it its Node flags and MALLOC_ARENA_MAX
# (scripts/worker-process.js) and passes SIGTERM on, so the shutdown grace applies. The tsx CLI, which this image
# ran before, SIGKILLs its child when a relayed signal is not acknowledged within 30 ms. Migrations are not run
# here: the database is migrated once, by its own job (`npm run db:migrate`, the engine-migrate service), before
# any worker starts.
CMD ["node", "scripts/bootstrap.js", "worker"]
