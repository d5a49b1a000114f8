# The plan worker (and the one-shot search-attribute setup) for docker-compose.yml.
FROM node:20-bookworm-slim

# better-sqlite3 compiles its native module when no prebuilt binary matches.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN node_modules/.bin/prisma generate

ENV DATABASE_URL=file:/data/agents.db
VOLUME /data

# Migrations run at start, not build: the database lives on the volume, not in the image.
CMD ["sh", "-c", "node_modules/.bin/prisma migrate deploy && exec node_modules/.bin/tsx worker/main.ts"]
