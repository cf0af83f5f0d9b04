# The payments service: one image for both roles (ROLE=api, ROLE=worker). It runs as `npm start` does, from
# the bundle bin/bundled.js makes of the TypeScript sources, made here once while the image is built; only
# production dependencies are installed.

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
# package.json's allowScripts (which dependencies may run install scripts) is read by npm 11; the npm 10 of
# the Node 20 image would ignore it and run every script. Same npm as development.
RUN npm install --global --no-audit --no-fund npm@11.19.1
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY migrations ./migrations
COPY src ./src
COPY activities ./activities
COPY workflows ./workflows
# The code and its bundle stay root's and read-only.
RUN node bin/bundled.js --build src/process/main.ts src/cli/index.ts
USER node
EXPOSE 3000 9464
# The API answers /readyz on PORT; a ROLE=worker process on METRICS_PORT (docker-compose.yml has the same).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "const e=process.env,p=e.ROLE==='worker'?e.METRICS_PORT||9464:e.PORT||3000;fetch('http://127.0.0.1:'+p+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "bin/service.js"]
