// Bench only: the service as src/main.ts composes it (one process), but on openapi-backend's stock router, to show
// what the precompiled router (src/http/openapi-router.ts, docs/adr/0010) gains. Not a way to run the service.
import { availableParallelism } from 'node:os';
import { createApp } from '../src/app.js';
import { compose } from '../src/compose.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/http/logging.js';
import { createHttpServer, listen } from '../src/server.js';

const config = loadConfig(process.env, availableParallelism());
const logger = createLogger(config.logLevel);
const composition = await compose(config, logger);
const server = createHttpServer(await createApp({ ...composition.deps, stockRouter: true }));
await listen(server, config.port, config.host);
logger.info({ port: config.port, router: 'stock' }, 'listening');
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => void composition.close().then(() => process.exit(0)));
});
