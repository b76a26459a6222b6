import { conflict, unavailable } from '@wagw/lib';
import type { Session } from './session';

export const alreadyConnected = () => conflict('already_connected', 'The instance is connected; no QR code is needed');
export const alreadyLinked = () =>
  conflict('already_linked', 'The instance is linked and its connection is coming back: no QR code comes for it; reset_instance first to link another phone');

/**
 * What can be done about an instance WhatsApp refused (`failed`: 403 banned, 405 client too old): it keeps its link,
 * so no QR code comes for it; its link can be tried again (once the ban is lifted, the gateway updated) or dropped.
 */
export const failedLinkAdvice = (reason: string): string =>
  `The instance failed (${reason}): WhatsApp refused its link; reconnect to try that link again, or reset_instance and link a phone anew with get_qrcode`;
export const instanceFailed = (reason: string) => conflict('instance_failed', failedLinkAdvice(reason));

/**
 * Waits at most `waitMs` for the session's QR code. Answers early when the phone links meanwhile (409), or when the
 * connection ends or is replaced (`isCurrent` turns false): with its reason if it gave one, else as a timeout.
 */
export const waitForQr = async (session: Session, isCurrent: () => boolean, waitMs: number): Promise<string> => {
  const deadline = Date.now() + waitMs;
  while (!session.qr) {
    if (session.status === 'connected') throw alreadyConnected();
    const remaining = deadline - Date.now();
    if (!isCurrent() && session.endReason) {
      throw unavailable('platform_connection_failed', `The connection to the platform ended before a QR code came (${session.endReason}); try again`);
    }
    if (remaining <= 0 || !isCurrent()) throw unavailable('qr_timeout', `No QR code from the platform within ${waitMs} ms; try again`);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, remaining);
      session.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  return session.qr;
};
