import type { handleBidiStreamingCall } from '@grpc/grpc-js';
import { TurnBatcher, toErrorDetail, isAppError, type Logger, type SendBatchMessage, type SendResult, type SendResults } from '@wagw/lib';
import type { MessagesService } from '../application/messagesService';
import { sendCommandOf } from './sendCommand';

/**
 * SendStream: each item of each frame is accepted like a unary Send (the accepts of a frame run together, so
 * their appends go out together); the answers of one event-loop turn go back as one frame. The stream ends
 * once every accepted item is answered.
 */
export const sendStreamHandler =
  (messages: MessagesService, logger: Logger): handleBidiStreamingCall<SendBatchMessage, SendResults> =>
  (call) => {
    let inFlight = 0;
    let ended = false;
    let finished = false;
    const finish = (): void => {
      if (finished || !ended || inFlight > 0) return;
      finished = true;
      call.end();
    };
    const out = new TurnBatcher<SendResult>((items) => {
      if (finished || !call.writable) return;
      call.write({ items });
      finish();
    });
    const answer = (result: SendResult): void => {
      inFlight--;
      out.push(result);
    };
    call.on('data', (batch: SendBatchMessage) => {
      for (const { id, request } of batch.items) {
        if (!request) continue;
        inFlight++;
        messages.accept(sendCommandOf(request)).then(
          (messageId) => answer({ id, messageId }),
          (error: unknown) => {
            // Bugs are errors; a 503 (NATS electing, an owner moving) is a warning: the client retries.
            if (!isAppError(error) || error.kind === 'internal') logger.error({ err: error }, 'send failed');
            else if (error.kind === 'unavailable') logger.warn({ err: error }, 'send answered unavailable');
            answer({ id, error: toErrorDetail(error) });
          },
        );
      }
    });
    call.on('end', () => {
      ended = true;
      // After any answers already queued for this turn have been written.
      setImmediate(finish);
    });
    call.on('error', (error) => logger.warn({ err: error }, 'send stream failed'));
  };
