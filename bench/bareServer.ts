import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import Fastify from 'fastify';

/**
 * The same-run references for HTTP benchmarks: bare Fastify. `GET /` answers a small JSON; `POST /send` validates
 * a send-shaped body with a JSON schema, as the gateway does; with BENCH_NATS_URL set, `POST /append` validates
 * the same body, appends it to a JetStream stream (file storage, as the event store) and answers after the ack:
 * the floor that any durable acceptance pays. Prints its port on stdout.
 */
const sendSchema = {
  body: {
    type: 'object',
    required: ['number', 'type', 'instance_id'],
    properties: {
      number: { type: 'string', maxLength: 32 },
      type: { enum: ['text', 'media'] },
      message: { type: 'string', maxLength: 4096 },
      instance_id: { type: 'string' },
    },
  },
  response: { 200: { type: 'object', properties: { status: { type: 'integer' }, message_id: { type: 'string' }, message: { type: 'string' } } } },
} as const;

const openStream = async (url: string): Promise<JetStreamClient> => {
  const nc = await connect({ servers: url, name: 'bench-bare' });
  await (await jetstreamManager(nc)).streams.add({ name: 'BENCH_FLOOR', subjects: ['bench.floor.>'] });
  return jetstream(nc);
};

const main = async (): Promise<void> => {
  const app = Fastify({ logger: false });
  app.get('/', async () => ({ hello: 'world' }));
  app.post('/send', { schema: sendSchema }, async () => ({ status: 200, message_id: 'm_reference', message: 'Message accepted for sending' }));
  const natsUrl = process.env.BENCH_NATS_URL;
  if (natsUrl) {
    const js = await openStream(natsUrl);
    app.post('/append', { schema: sendSchema }, async (request) => {
      const ack = await js.publish('bench.floor.send', JSON.stringify(request.body));
      return { status: 200, message_id: `m_${ack.seq}`, message: 'Message accepted for sending' };
    });
  }
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
};

void main();
