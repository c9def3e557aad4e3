import { readFileSync } from 'node:fs';
import { ServiceBroker } from 'moleculer';
import ApiGateway from 'moleculer-web';

/**
 * The peer the bench compares with: a Moleculer gateway (moleculer-web) and a responder on the same NATS,
 * written the way its documentation shows, answering the same bytes as our free GET.
 *   ROLE=responder | gateway, NATS_URL, NAMESPACE, PORT (gateway), BODY_FILE (responder)
 */
const role = process.env.ROLE;
const broker = new ServiceBroker({
  nodeID: `${role}-${process.pid}`,
  namespace: process.env.NAMESPACE,
  transporter: process.env.NATS_URL,
  logger: false,
  metrics: false,
  tracing: false,
});

if (role === 'responder') {
  const answer = JSON.parse(readFileSync(process.env.BODY_FILE!, 'utf8'));
  broker.createService({ name: 'signings', actions: { status: { params: { vin: 'string' }, handler: () => answer } } });
} else {
  broker.createService({
    name: 'api',
    mixins: [ApiGateway],
    settings: {
      port: Number(process.env.PORT),
      ip: '127.0.0.1',
      logRequest: null,
      logResponse: null,
      routes: [{ path: '/', mappingPolicy: 'restrict', aliases: { 'GET signings/status': 'signings.status' } }],
    },
  });
}
await broker.start();
process.once('SIGTERM', () => void broker.stop().then(() => process.exit(0)));
