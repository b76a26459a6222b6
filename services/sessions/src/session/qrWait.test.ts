import { newSession, wake } from './session';
import { waitForQr } from './qrWait';

describe('waiting for a QR code', () => {
  it('answers the QR code as soon as the platform shows one', async () => {
    const session = newSession('I1');
    const waiting = waitForQr(session, () => true, 5_000);
    session.qr = 'ref-1';
    wake(session);
    await expect(waiting).resolves.toBe('ref-1');
  });

  it('answers 409 already_connected when the phone links instead', async () => {
    const session = newSession('I1');
    const waiting = waitForQr(session, () => true, 5_000);
    session.status = 'connected';
    wake(session);
    await expect(waiting).rejects.toMatchObject({ kind: 'conflict', code: 'already_connected' });
  });

  it('answers at once, with the reason, when the connection ends before a QR code came', async () => {
    const session = newSession('I1');
    let current = true;
    const started = Date.now();
    const waiting = waitForQr(session, () => current, 5_000);
    session.endReason = 'connection_refused';
    current = false;
    wake(session);
    await expect(waiting).rejects.toMatchObject({ kind: 'unavailable', code: 'platform_connection_failed' });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('answers 503 qr_timeout at its deadline when nothing comes', async () => {
    const session = newSession('I1');
    const started = Date.now();
    await expect(waitForQr(session, () => true, 50)).rejects.toMatchObject({ kind: 'unavailable', code: 'qr_timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });
});
