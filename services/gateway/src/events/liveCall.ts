import type { ClientReadableStream, ServiceError } from '@grpc/grpc-js';
import { fromServiceError, unavailable, type StreamEventsFrameMessage, type StreamEventsRequest } from '@wagw/lib';

export type LiveCall = ClientReadableStream<StreamEventsFrameMessage>;

/** How long the webhooks service may take to check a request and open its feed. */
const READY_TIMEOUT_MS = 10_000;

/**
 * Opens a live events call and waits for its `ready` frame, so that a bad request (unknown type, foreign instance,
 * bad Last-Event-ID) is a plain 4xx answer before any event-stream header is sent. `gone` (the reader went away)
 * cancels the opening call at once: the webhooks service's feed for it is not held until `ready` or the time-out.
 */
export const openLiveCall = (start: (request: StreamEventsRequest) => LiveCall, request: StreamEventsRequest, gone?: AbortSignal): Promise<LiveCall> =>
  new Promise((resolve, reject) => {
    const call = start(request);
    const settle = (error: Error | null): void => {
      clearTimeout(timer);
      gone?.removeEventListener('abort', onGone);
      // Paused until the event stream is wired: a frame arriving meanwhile waits instead of being dropped.
      call.pause();
      call.off('data', onData);
      call.off('error', onError);
      if (!error) return resolve(call);
      call.cancel();
      // A cancelled call still reports CANCELLED; nothing listens any more, so it is swallowed here.
      call.on('error', () => undefined);
      reject(error);
    };
    const onData = (frame: StreamEventsFrameMessage): void =>
      settle(frame.frame === 'ready' ? null : unavailable('service_unavailable', 'The events stream did not start as expected'));
    const onError = (error: ServiceError): void => settle(fromServiceError(error));
    const onGone = (): void => settle(unavailable('client_gone', 'The reader went away'));
    const timer = setTimeout(() => settle(unavailable('service_timeout', 'The events stream did not start in time')), READY_TIMEOUT_MS);
    call.on('data', onData);
    call.on('error', onError);
    gone?.addEventListener('abort', onGone);
    if (gone?.aborted) onGone();
  });
