import { instanceEvent, instanceIdFor, instanceStream, messageEvent, messageStream } from '@wagw/lib';
import { dispatchRig, type DispatchRig } from '../../../../test/harness/dispatchRig';
import { testLogger } from '../../../../test/harness/logger';
import { eventually } from '../../../../test/harness/wait';
import { MemoryTextBucket } from '../connector/baileys/textBucket';
import { InboundRefStore } from '../inbound/inboundRefs';
import { createMediaFetcher } from '../media/mediaFetcher';
import { FactWriter } from '../session/factWriter';
import { SessionManager } from '../session/sessionManager';
import { everyLease } from '../../../../test/harness/everyLease';

// Application test of a restriction and the link it belongs to: the real dispatcher, session manager (with what its
// connections heard of a restriction), fact writer and registry, on an in-memory store and the sandbox platform. The
// account on number A is restricted, the phone logs the device out, and number B scans a new QR code: B's sends go out.

const A = '4915100000001';
const B = '4915100000002';
const TO = '4915199999999';
const HOUR = 3_600_000;

describe('A restriction ends with the link (application, in-memory store, sandbox platform)', () => {
  const media = createMediaFetcher({ maxBytes: 1024, timeoutMs: 1_000, allowPrivateNetworks: false });
  let rig: DispatchRig;
  let sessions: SessionManager;
  let n = 0;
  let id = '';

  afterAll(() => media.close());
  beforeEach(() => {
    rig = dispatchRig({
      media,
      dispatch: { pacingMs: 0, ttlMs: 60_000, retryMs: 50, retryForMs: 10_000 },
      connections: ({ store, registry, platform }) => {
        const facts = new FactWriter(store, new InboundRefStore(new MemoryTextBucket()), testLogger());
        // Sends wait an hour after a restriction whose end WhatsApp did not name: longer than this test.
        sessions = new SessionManager(platform, facts, registry, everyLease, testLogger(), { autoMarkRead: false, restrictedPauseMs: HOUR }, () => 0);
        return sessions;
      },
    });
    id = instanceIdFor('acme', `relink-${++n}`);
  });
  afterEach(async () => {
    await sessions.closeAll();
    await rig.stop();
  });

  const state = async () => {
    await rig.registry.reach(id, 2_000);
    return rig.registry.stateOf(id);
  };
  /** get_qrcode, and the phone of `number` scans it: connected once the log says so. */
  const link = async (number: string): Promise<void> => {
    await sessions.getQr(id, 2_000);
    await rig.platform.scan(id, number);
    const linked = await eventually(state, (s) => s?.lifecycle === 'connected' && s.linkedNumber === number);
    expect([linked?.lifecycle, linked?.linkedNumber]).toEqual(['connected', number]);
  };
  const accept = (messageId: string, text: string) =>
    rig.store.append(
      messageStream(id, messageId),
      [messageEvent('MessageAccepted', new Date().toISOString(), { message_id: messageId, to: TO, type: 'text', text, media_url: null, filename: null })],
      { expectedVersion: 0, commandId: `accept-${messageId}` },
    );
  const sentTexts = () => rig.platform.sent(id).map((m) => m.text);

  it.each([
    ['without a known end (heard from a refused send)', null],
    ['with an end WhatsApp named', HOUR],
  ])("sends on another number's link at once after the restriction of the number logged out, %s", async (_, endsIn) => {
    await rig.append(instanceStream(id), instanceEvent('InstanceCreated', new Date().toISOString(), { instance_id: id, account: 'acme' }));
    rig.dispatcher.start();
    await link(A);

    rig.platform.restrict(id, endsIn === null ? null : Date.now() + endsIn);
    if (endsIn === null) await accept('refused', 'refused on A');
    expect((await eventually(state, (s) => s?.restriction != null))?.restriction).toMatchObject({ until: endsIn === null ? null : expect.any(String) });
    expect(sessions.sendsPaused(id)).toBe(true);

    await rig.platform.logoutFromPhone(id);
    const loggedOut = await eventually(state, (s) => s?.lifecycle === 'logged_out');
    // Status shows no restriction: no account is linked any more.
    expect([loggedOut?.lifecycle, loggedOut?.restriction]).toEqual(['logged_out', null]);

    // B's account is not restricted: lifted on the sandbox, which keeps a restriction per instance, not per number.
    rig.platform.lift(id);
    await link(B);
    expect(sessions.sendsPaused(id)).toBe(false);
    await accept('on-b', 'sent on B');
    expect(
      await eventually(
        async () => sentTexts(),
        (texts) => texts.includes('sent on B'),
        3_000,
      ),
    ).toEqual(['sent on B']);
    expect((await state())?.restriction).toBeNull();
  });
});
