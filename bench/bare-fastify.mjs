// The ceiling of `npm run bench`: Fastify 5 with no plugins, one route, `{ hello: 'world' }`, logger off.
// Env: PORT, HOST (default 127.0.0.1).
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ port: Number(process.env.PORT ?? 3200), host: process.env.HOST ?? '127.0.0.1' });

const stop = () => void app.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
