import { AppError, conflict, isAppError, notFound, unavailable, type Logger } from '@wagw/lib';
import { MediaUnavailable, type Connection, type Connector, type MediaDownload } from '../connector/port';
import type { InboundRefStore } from './inboundRefs';

/** What drops a received message's ref: its age (KV TTL), an erasure or a reset (service.ts); the client is told all three. */
const messageNotFound = (): AppError =>
  notFound(
    'message_not_found',
    "This instance received no message with this id, or none that can still be reached: over 30 days ago, or before the instance's data was erased or the instance reset",
  );

/** The ref of a message the instance received; a 404 for any other id (another instance's, one we sent, a made-up one). */
const refOf = async (refs: InboundRefStore, instanceId: string, messageId: string): Promise<string> => {
  const ref = await refs.get(instanceId, messageId);
  if (ref === null) throw messageNotFound();
  return ref;
};

/**
 * Runs `call` over the instance's connection on this replica (the lease holder's): 409 `not_connected` without one
 * (`what` says what needs it), a 503 `failure` when the platform fails the call; our own refusals (AppErrors) pass.
 */
export const overConnection = async <T>(
  connection: Connection | null,
  what: string,
  failure: { code: string; message: string },
  call: (connection: Connection) => Promise<T>,
): Promise<T> => {
  if (!connection) throw conflict('not_connected', `The instance is not connected: ${what} over its connection`);
  try {
    return await call(connection);
  } catch (error) {
    if (isAppError(error)) throw error;
    throw unavailable(failure.code, `${failure.message}; try again`, error);
  }
};

/** mark_read on the replica holding the instance's connection: a read receipt the sender sees (blue ticks). */
export const markRead = async (refs: InboundRefStore, connection: Connection | null, instanceId: string, messageId: string, logger: Logger): Promise<void> => {
  const ref = await refOf(refs, instanceId, messageId);
  await overConnection(connection, 'read receipts go out', { code: 'mark_read_failed', message: 'The read receipt could not be sent' }, (c) =>
    c.markRead(ref).catch((error: unknown) => {
      logger.warn({ err: error, instanceId, messageId }, 'sending a read receipt failed');
      throw error;
    }),
  );
};

const MEDIA_ERRORS: Record<MediaUnavailable['reason'], (message: string) => AppError> = {
  no_media: () => notFound('no_media', 'The message has no media (text only)'),
  too_large: (message) => new AppError('too_large', 'media_too_large', `${message}; raise MEDIA_DOWNLOAD_MAX_BYTES to fetch it`),
  expired: (message) => notFound('media_expired', message),
  failed: (message) => unavailable('media_download_failed', `${message}; try again`),
};

/** The decrypted media of a received message, within `maxBytes`; answered by any replica (no connection needed). */
export const downloadInboundMedia = async (
  refs: InboundRefStore,
  connector: Connector,
  instanceId: string,
  messageId: string,
  maxBytes: number,
  logger: Logger,
): Promise<MediaDownload> => {
  const ref = await refOf(refs, instanceId, messageId);
  try {
    return await connector.downloadMedia(ref, maxBytes);
  } catch (error) {
    if (error instanceof MediaUnavailable) throw MEDIA_ERRORS[error.reason](error.message);
    logger.warn({ err: error, instanceId, messageId }, 'downloading received media failed');
    throw unavailable('media_download_failed', 'The media could not be fetched; try again', error);
  }
};
