// Entry point: config -> composition -> app -> listen; SIGTERM/SIGINT drain in-flight requests and exit 0.
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { compose } from './compose.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger } from './http/logging.js';
import { createHttpServer, drain, listen } from './server.js';

async function ensureFirstKey(c: Awaited<ReturnType<typeof compose>>, config: Readonly<Config>): Promise<void> {
  if ((await c.keyStore.list()).length > 0) return;
  const { record, key } = await c.keyStore.create({ name: 'default' });
  await c.keys.refresh();
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  process.stdout.write(
    `\nCreated the first API key (${record.id}); it is shown only this once:\n\n    ${key}\n\n` +
      `Use it in the X-Api-Key header, e.g.:\n    curl -H 'X-Api-Key: ${key}' http://${host}:${config.port}/api/v1/bic/DEUTDEFF\n\n`,
  );
}

async function main(): Promise<void> {
  let config: Readonly<Config>;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  const composition = await compose(config, logger);
  await ensureFirstKey(composition, config);
  const server = createHttpServer(createApp(composition.deps));
  await listen(server, config.port, config.host);
  const { port } = server.address() as AddressInfo;
  logger.info({ port, host: config.host }, 'listening');
  process.stdout.write(`listening on http://${config.host}:${port} (docs at /docs)\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    composition.beginDrain();
    const how = await drain(server, config.shutdownTimeoutMs);
    await composition.close();
    logger.info({ how }, 'stopped');
    logger.flush();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
