import { decideReplay } from './decisions';

describe('decideReplay', () => {
  const command = {
    replayId: 'rpl_1',
    instanceId: '6F1C0A9B3D2E4F5A6B7C',
    since: '2026-11-23T10:00:00Z',
    until: '',
    types: '',
    now: '2026-11-24T10:00:00.000Z',
  };

  it('refuses a replay while the webhook is off with 409, naming the route that switches it on (it named /v1/webhook, which does not exist)', () => {
    const refusal = (() => {
      try {
        decideReplay(command, false);
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(refusal).toMatchObject({ kind: 'conflict', code: 'webhook_disabled', message: expect.stringContaining('/v1/set_webhook') });
  });

  it('records the replay while the webhook is on', () => {
    expect(decideReplay(command, true)).toMatchObject([{ type: 'ReplayRequested', data: { replay_id: 'rpl_1', until: null, types: [] } }]);
  });
});
