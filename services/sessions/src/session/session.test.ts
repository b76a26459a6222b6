import { applyStateChange, newSession } from './session';

describe('a session told of changes of its connection state', () => {
  it('shows a QR code, then clears it once connected, waking every waiting get_qrcode each time', () => {
    const session = newSession('S1');
    let woken = 0;
    const wait = (): void => void session.waiters.push(() => (woken += 1));
    wait();
    expect(applyStateChange(session, { type: 'qr', qr: 'secret' })).toBe('stay');
    expect(session).toMatchObject({ status: 'qr', qr: 'secret' });
    session.reconnectAttempts = 3;
    wait();
    expect(applyStateChange(session, { type: 'connected', number: '4915112345678' })).toBe('stay');
    expect(session).toMatchObject({ status: 'connected', qr: null, reconnectAttempts: 0 });
    expect(woken).toBe(2);
  });

  it('ends on an expired QR code or a failure, wipes the credentials first on a logout, and reconnects after a drop', () => {
    expect(applyStateChange(newSession('S1'), { type: 'disconnected', reason: 'qr_expired' })).toBe('end');
    expect(applyStateChange(newSession('S1'), { type: 'failed', reason: 'banned' })).toBe('end');
    expect(applyStateChange(newSession('S1'), { type: 'logged_out', reason: 'device_removed' })).toBe('wipe_and_end');
    const dropped = newSession('S1');
    dropped.qr = 'old';
    expect(applyStateChange(dropped, { type: 'disconnected', reason: 'connection_lost' })).toBe('reconnect');
    expect(dropped).toMatchObject({ qr: null, endReason: 'connection_lost' });
  });
});
