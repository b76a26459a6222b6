import { InMemoryEventStore } from '../eventStore';
import { instanceEvent, instanceStream, messageEvent, messageStream } from '../events';
import { InstanceStates } from './instanceStates';
import { testLogger } from '../../../test/harness/logger';

// Application test of the model's record of when an instance's webhook was on: given an instance's webhook switched
// on, off and on again (with messages between), then which events were raised while it was on.

const ID = 'HOOKED1';
const AT = '2026-11-28T10:00:00.000Z';

describe('InstanceStates.webhookOnAt (application, in-memory store)', () => {
  const store = new InMemoryEventStore();
  const states = new InstanceStates(store, testLogger());
  afterAll(() => states.stop());

  const instance = (type: 'WebhookConfigured' | 'WebhookDisabled', data: Record<string, unknown>) =>
    store.append(instanceStream(ID), [instanceEvent(type, AT, data as never)], { expectedVersion: 'any', commandId: `c-${Math.random()}` });
  const message = async (): Promise<number> =>
    (
      await store.append(messageStream(ID, `m${Math.random()}`), [messageEvent('MessageSent', AT, { message_id: 'm', to: '4915100000001' })], {
        expectedVersion: 'any',
        commandId: `c-${Math.random()}`,
      })
    ).version;

  it('says on for the events of the last period on only, off before any webhook and after it went off', async () => {
    await store.append(instanceStream(ID), [instanceEvent('InstanceCreated', AT, { instance_id: ID, account: 'acme' })], {
      expectedVersion: 0,
      commandId: 'created',
    });
    const beforeAny = await message();
    await instance('WebhookConfigured', { url: 'https://hooks.example/a', enabled: true });
    const firstOn = await message();
    await instance('WebhookDisabled', { reason: 'gone' });
    const whileOff = await message();
    await instance('WebhookConfigured', { url: 'https://hooks.example/a', enabled: true });
    const secondOn = await message();
    await instance('WebhookConfigured', { url: 'https://hooks.example/b', enabled: true });
    const afterNewUrl = await message();
    await instance('WebhookConfigured', { url: 'https://hooks.example/b', enabled: false });
    const afterOff = await message();
    states.start();
    expect(await states.reach(ID, 2_000)).toBe(true);

    expect([beforeAny, whileOff, afterOff].map((s) => states.webhookOnAt(ID, s))).toEqual([false, false, false]);
    expect([secondOn, afterNewUrl].map((s) => states.webhookOnAt(ID, s))).toEqual([true, true]);
    // Only the last period is kept: an event of an earlier one reads as off (a drop is then not recorded).
    expect(states.webhookOnAt(ID, firstOn)).toBe(false);
    expect(states.webhookOnAt('UNKNOWN', secondOn)).toBe(false);
  });
});
