import { decideOnClose, QR_REFS_ENDED, type CloseDecision } from './disconnectPolicy';

const close = (statusCode: number | undefined, message = 'Connection Failure') => decideOnClose({ statusCode, message });
const ends = (type: string, reason: string, purge = false): CloseDecision => ({ action: 'end', event: { type, reason }, purge }) as CloseDecision;

describe('disconnect policy', () => {
  it('does nothing when we ended the socket ourselves (no error)', () => {
    expect(decideOnClose(null)).toEqual({ action: 'none' });
  });

  it('restarts at once, without telling the session, when WhatsApp asks for it (515)', () => {
    expect(close(515, 'Stream Errored (restart required)')).toEqual({ action: 'restart' });
  });

  it('reports a device removed from the phone (401) as logged out, and wipes the credentials', () => {
    expect(close(401, 'Connection Failure')).toEqual(ends('logged_out', 'logged_out_on_phone', true));
  });

  it.each([
    [403, 'forbidden'],
    [405, 'client_outdated'],
    [411, 'multidevice_mismatch'],
  ])('fails for good on %i (%s), keeping the credentials', (code, reason) => {
    expect(close(code)).toEqual(ends('failed', reason));
  });

  it('leaves a connection replaced by another socket (440) to the session, which checks its lease', () => {
    expect(close(440, 'Stream Errored (conflict)')).toEqual(ends('disconnected', 'replaced'));
  });

  it('tells an expired QR code (408 with its message) from a lost connection (408)', () => {
    expect(close(408, QR_REFS_ENDED)).toEqual(ends('disconnected', 'qr_expired'));
    expect(close(408, 'Connection was lost')).toEqual(ends('disconnected', 'connection_lost'));
  });

  it.each([
    [428, 'connection_closed'],
    [500, 'bad_session'],
    [503, 'service_unavailable'],
    [999, 'unknown_999'],
    [undefined, 'connection_error'],
  ])('reports %s as disconnected (%s), for the session to back off', (code, reason) => {
    expect(close(code)).toEqual(ends('disconnected', reason));
  });
});
