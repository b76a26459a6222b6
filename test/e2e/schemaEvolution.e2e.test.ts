import { connectNats, instanceStream, JetStreamEventStore, STREAMS, type NatsHandle } from '@wagw/lib';
import { stackWithReceiver } from '../harness/receiverStack';
import { testLogger } from '../harness/logger';

describe('an event stored in an older schema version, read over HTTP', () => {
  const env = stackWithReceiver();
  let nats: NatsHandle;
  beforeAll(async () => {
    nats = await connectNats({ url: env.stack.nats.url, name: 'schema-test', logger: testLogger('schema-test') });
  });
  afterAll(() => nats.close());

  it('shows InstanceDisconnected v1 in its current shape (v2) in the history, the status and the webhook payload', async () => {
    const id = (await env.stack.call('/v1/create_instance')).body.instance_id as string;
    const set = await env.stack.call(`/v1/set_webhook?instance_id=${id}&enable=true&webhook_url=${encodeURIComponent(env.receiver.url('/schema'))}`);
    env.receiver.secret('/schema', set.body.signing_secret as string);
    // Written as a gateway from before v2 wrote it: version 1, no `reconnecting`.
    const store = await JetStreamEventStore.open(nats);
    const at = new Date().toISOString();
    await store.append(instanceStream(id), [{ type: 'InstanceDisconnected', schemaVersion: 1, occurredAt: at, data: { reason: 'connection_lost' } }], {
      expectedVersion: 'any',
      commandId: `old-${id}`,
    });

    const history = await env.stack.call(`/v1/history?instance_id=${id}&types=InstanceDisconnected`);
    expect(history.body.events).toEqual([
      expect.objectContaining({ type: 'InstanceDisconnected', schema_version: 2, occurred_at: at, data: { reason: 'connection_lost', reconnecting: true } }),
    ]);
    const status = await env.stack.call(`/v1/status?instance_id=${id}`);
    // The status is folded from the upcast event by the same evolve as ever (a never-linked instance stays `created`).
    expect(status.body).toMatchObject({ state: 'created', last_disconnect_reason: 'connection_lost' });
    const [delivered] = await env.receiver.waitFor('/schema', 1);
    expect(delivered!.body).toMatchObject({ type: 'instance.disconnected', data: { reason: 'connection_lost', reconnecting: true } });
    // The stored event is not rewritten: the log still holds version 1.
    const raw = await nats.jsm.direct.getMessage(STREAMS.events.name, { last_by_subj: `${STREAMS.events.subjectPrefix}.${instanceStream(id)}` });
    expect(raw?.json<{ events: Array<{ v: number }> }>().events[0]!.v).toBe(1);
  });
});
