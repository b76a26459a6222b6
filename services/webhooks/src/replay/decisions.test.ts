import { decideFinish, decideReplay, decideStop } from './decisions';
import { replayEvent } from './events';
import { evolveReplay, initialReplayState, type ReplayState } from './state';

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

describe('a replay stopped by a switch-off', () => {
  const now = '2026-11-24T10:00:00.000Z';
  const requested = evolveReplay(
    initialReplayState(),
    replayEvent('ReplayRequested', now, { replay_id: 'rpl_1', instance_id: '6F1C0A9B3D2E4F5A6B7C', since: 0, until: null, types: [] }),
  );
  const fold = (state: ReplayState, events: ReturnType<typeof decideStop>): ReplayState => events.reduce(evolveReplay, state);

  it('stops once: a replay stopped already (resumed after a crash) records no second stop', () => {
    const stopped = fold(requested, decideStop(requested, now));
    expect(stopped).toMatchObject({ stopped: 'the webhook was switched off', finished: false });
    expect(decideStop(stopped, now)).toEqual([]);
  });

  it('finishes with the reason it stopped for and the events it dropped; one that was not stopped has none', () => {
    const stopped = fold(requested, decideStop(requested, now));
    expect(decideFinish(stopped, { replayed: 1, dropped: 4 }, now)).toMatchObject([
      { type: 'ReplayFinished', data: { replayed: 1, dropped: 4, reason: 'the webhook was switched off' } },
    ]);
    expect(decideFinish(requested, { replayed: 5, dropped: 0 }, now)).toMatchObject([{ data: { replayed: 5, dropped: 0, reason: null } }]);
    expect(decideFinish(fold(stopped, decideFinish(stopped, { replayed: 1, dropped: 4 }, now)), { replayed: 1, dropped: 4 }, now)).toEqual([]);
  });
});
