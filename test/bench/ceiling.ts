import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

/** The ceiling of this stack: a bare fastify route answering the same bytes as the full path. */
const body = readFileSync(process.env.BODY_FILE!);
const app = Fastify({ logger: false });
const send = async (_req: unknown, reply: import('fastify').FastifyReply) => reply.type('application/json').send(body);
app.get('/*', send);
app.post('/*', send);
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.send?.('ready');
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
