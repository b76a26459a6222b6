import { conflict, unavailable } from '@wagw/lib';
import type { InstanceFacts } from '../registry/instanceRegistry';
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

/**
 * Refuses a QR code where none can come: the instance is connected; WhatsApp refused it and it is linked still (a
 * start would log that link in again, silently, and show no QR code); or its linked connection is down and coming
 * back (it logs in with its stored link).
 */
export const assertQrCanCome = (running: Session | undefined, facts: InstanceFacts | undefined): void => {
  if (running?.status === 'connected') throw alreadyConnected();
  if (!running && facts?.blockedReason && facts.linkedNumber) throw instanceFailed(facts.blockedReason);
  if (running && !running.qr && facts?.linkedNumber) throw alreadyLinked();
};

/** A pairing code for `number` over the session's connection (it shows QR codes); 503 when it ended or gave none. */
export const pairingCodeOver = async (session: Session | undefined, number: string, refused: (error: unknown) => void): Promise<string> => {
  const connection = session?.connection;
  if (!connection) throw unavailable('platform_connection_failed', 'The connection to the platform ended before a pairing code came; try again');
  try {
    return await connection.requestPairingCode(number);
  } catch (error) {
    refused(error);
    throw unavailable('pairing_code_failed', 'The platform gave no pairing code; try again');
  }
};
