// A process that takes SMTP session slots of one address through Redis and holds them until it is killed: the holder
// SIGKILLed in the shared-limits tests. Usage: node --import tsx test/support/slot-holder.ts URL ADDRESS COUNT LEASE_MS
import { createRedisClient } from '../../src/adapters/redis/redis-client.js';
import { createRedisAddressSlots } from '../../src/adapters/smtp/redis-address-slots.js';

const [url, address, count, leaseMs] = process.argv.slice(2);
const client = createRedisClient(url, { commandTimeoutMs: 10_000 });
const slots = createRedisAddressSlots(client, { perAddress: Number(count), leaseMs: Number(leaseMs) });
await new Promise((resolve) => client.once('ready', resolve));
for (let i = 0; i < Number(count); i++) await slots.take(address, AbortSignal.timeout(30_000));
process.stdout.write('held\n');
setInterval(() => undefined, 60_000); // stay until killed, never giving the slots back
