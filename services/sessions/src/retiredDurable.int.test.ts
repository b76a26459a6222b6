import { AckPolicy } from '@nats-io/jetstream';
import { connectNats, JetStreamEventStore, STREAMS, type NatsHandle } from '@wagw/lib';
import { testLogger } from '../../../test/harness/logger';
import { startTestNats, type TestNats } from '../../../test/harness/natsServer';
import { testSessionsConfig } from '../../../test/harness/stack';
import { RETIRED_DISPATCH_DURABLE, startSessionsService } from './service';

describe('sessions start-up on a stream an older release used', () => {
  let nats: TestNats;
  let handle: NatsHandle;
  beforeAll(async () => {
    nats = await startTestNats();
    handle = await connectNats({ url: nats.url, name: 'retired-durable', logger: testLogger() });
  });
  afterAll(async () => {
    await handle.close();
    await nats.dispose();
  });

  it('deletes the dispatch durable nothing reads any more, and leaves the others', async () => {
    await JetStreamEventStore.open(handle);
    const durable = { ack_policy: AckPolicy.Explicit, filter_subject: `${STREAMS.events.subjectPrefix}.*.message.*` };
    await handle.jsm.consumers.add(STREAMS.events.name, { ...durable, durable_name: RETIRED_DISPATCH_DURABLE });
    await handle.jsm.consumers.add(STREAMS.events.name, { ...durable, durable_name: 'someone-else' });
    const sessions = await startSessionsService(testSessionsConfig(nats.url), testLogger('sessions'));
    try {
      // Durables only: the service's own read models use ephemeral ordered consumers.
      const durables: string[] = [];
      for await (const info of handle.jsm.consumers.list(STREAMS.events.name)) if (info.config.durable_name) durables.push(info.name);
      expect(durables).toEqual(['someone-else']);
    } finally {
      await sessions.close();
    }
  });
});
