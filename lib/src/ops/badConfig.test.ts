import { isBadConfigReport, reportBadConfigToLauncher, type BadConfigReport } from './badConfig';

describe('reportBadConfigToLauncher', () => {
  const launched = { LAUNCHER_IPC: '1' };

  it('sends the message to the launcher that started this process, as a report it recognizes', async () => {
    const sent: BadConfigReport[] = [];
    const reported = await reportBadConfigToLauncher('QR_WAIT_MS must be ...', launched, (message, done) => {
      sent.push(message);
      done(null);
      return true;
    });
    expect({ reported, sent }).toEqual({ reported: true, sent: [{ type: 'bad_config', message: 'QR_WAIT_MS must be ...' }] });
    expect(sent.every(isBadConfigReport)).toBe(true);
  });

  it('says false (the caller logs it instead) when not started by the launcher, or when the channel is gone', async () => {
    const send = jest.fn((_message: BadConfigReport, done: (error: Error | null) => void) => (done(null), true));
    // A process with a channel that is not the launcher's (a jest worker) must not be sent reports.
    expect(await reportBadConfigToLauncher('x', {}, send)).toBe(false);
    expect(send).not.toHaveBeenCalled();
    expect(await reportBadConfigToLauncher('x', launched, undefined)).toBe(false);
    expect(await reportBadConfigToLauncher('x', launched, (_m, done) => (done(new Error('EPIPE')), false))).toBe(false);
    const closed = (): boolean => {
      throw new Error('ERR_IPC_CHANNEL_CLOSED');
    };
    expect(await reportBadConfigToLauncher('x', launched, closed)).toBe(false);
  });
});
