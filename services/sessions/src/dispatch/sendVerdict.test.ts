import { sendFailureOf } from './sendVerdict';

const linked = { account: 'a', linkedNumber: '4915112345678', blockedReason: null, resetSequence: 0, dataErasedAt: null };
const HOUR = 3_600_000;

describe('sendFailureOf', () => {
  it('lets a fresh send of a linked instance go on', () => {
    expect(sendFailureOf(linked, { sequence: 10, acceptedAt: 1_000 }, 2_000, HOUR)).toBeNull();
    expect(sendFailureOf(undefined, { sequence: 10, acceptedAt: 1_000 }, 2_000, HOUR)).toBeNull();
  });

  it('fails a send accepted before the last reset, or any send of an instance reset and not linked again', () => {
    expect(sendFailureOf({ ...linked, resetSequence: 11 }, { sequence: 10, acceptedAt: 0 }, 1, HOUR)).toBe('instance_reset');
    expect(sendFailureOf({ ...linked, resetSequence: 5, linkedNumber: null }, { sequence: 10, acceptedAt: 0 }, 1, HOUR)).toBe('instance_reset');
    expect(sendFailureOf({ ...linked, resetSequence: 5 }, { sequence: 10, acceptedAt: 0 }, 1, HOUR)).toBeNull();
  });

  it('fails the sends of a logged out instance with the reason, and any send past the TTL', () => {
    expect(sendFailureOf({ ...linked, blockedReason: 'logged_out' }, { sequence: 1, acceptedAt: 0 }, 1, HOUR)).toBe('instance_logged_out');
    expect(sendFailureOf(linked, { sequence: 1, acceptedAt: 0 }, HOUR + 1, HOUR)).toBe('expired');
  });

  it('fails a send accepted after a reset (linked again since) as the logout it met, not as the reset', () => {
    // A logout clears the linked number too; the reset long before is not why this send cannot go out.
    const loggedOutSinceReset = { ...linked, resetSequence: 5, linkedNumber: null, blockedReason: 'logged_out_on_phone' };
    expect(sendFailureOf(loggedOutSinceReset, { sequence: 10, acceptedAt: 0 }, 1, HOUR)).toBe('instance_logged_out_on_phone');
    expect(sendFailureOf(loggedOutSinceReset, { sequence: 4, acceptedAt: 0 }, 1, HOUR)).toBe('instance_reset');
  });

  it('fails a send accepted before the instance content was erased as content_erased; one accepted after goes on', () => {
    expect(sendFailureOf({ ...linked, dataErasedAt: 5_000 }, { sequence: 1, acceptedAt: 4_000 }, 6_000, HOUR)).toBe('content_erased');
    expect(sendFailureOf({ ...linked, dataErasedAt: 5_000 }, { sequence: 2, acceptedAt: 5_001 }, 6_000, HOUR)).toBeNull();
  });
});
