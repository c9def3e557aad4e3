import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { connect } from '@nats-io/transport-node';

/**
 * A reference for scale, beside the ceiling: "fastify → NATS → responder written the obvious way",
 * with `noAsyncTraces: true` and the reply bytes passed through. It measures what the transport alone costs on
 * this machine: none of the gateway's work (key check, rate limit, validation, metering, metrics, CORS, answer
 * metadata) and no handler. The responder answers the same bytes as our free GET.
 *   ROLE=responder | gateway, NATS_URL, NAMESPACE, PORT (gateway), BODY_FILE (responder)
 */
const nc = await connect({ servers: process.env.NATS_URL, noAsyncTraces: true });
const subject = `${process.env.NAMESPACE}.signings.status`;

if (process.env.ROLE === 'responder') {
  const body = readFileSync(process.env.BODY_FILE!);
  nc.subscribe(subject, {
    callback: (err, msg) => {
      if (!err) msg.respond(body);
    },
  });
} else {
  const app = Fastify({ logger: false });
  app.get('/signings/status', async (req, reply) => {
    const msg = await nc.request(subject, JSON.stringify(req.query), { timeout: 3000 });
    return reply.type('application/json').send(Buffer.from(msg.data.buffer, msg.data.byteOffset, msg.data.byteLength));
  });
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
}
process.once('SIGTERM', () => void nc.drain().then(() => process.exit(0)));
