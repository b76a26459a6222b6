import Fastify from 'fastify';

/**
 * The same-run reference for HTTP benchmarks: bare Fastify, no I/O. `GET /` answers a small JSON; `POST /send`
 * validates a send-shaped body with a JSON schema, as the gateway does. Prints its port on stdout.
 */
const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
app.post(
  '/send',
  {
    schema: {
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
    },
  },
  async () => ({ status: 200, message_id: 'm_reference', message: 'Message accepted for sending' }),
);
void app.listen({ host: '127.0.0.1', port: 0 }).then(() => {
  const address = app.server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
