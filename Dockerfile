# steward runs its TypeScript directly on Node 24 (built-in type stripping): no build step.
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci's postinstall makes the empty database a first start copies (scripts/pglite-template.ts,
# readable by the node user): it needs the store's sources.
COPY src ./src
COPY scripts/pglite-template.ts ./scripts/
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY cli ./cli
COPY adapters ./adapters
COPY migrations ./migrations
COPY skills ./skills
RUN mkdir -p /data /workspace && chown node:node /data /workspace
USER node
ENV STEWARD_DATA_DIR=/data STEWARD_WORKSPACE=/workspace
VOLUME ["/data", "/workspace"]
ENTRYPOINT ["./bin/steward.js"]
CMD ["start"]
