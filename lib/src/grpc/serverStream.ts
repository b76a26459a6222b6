import { once } from 'node:events';
import type { handleServerStreamingCall, ServerWritableStream } from '@grpc/grpc-js';
import type { Logger } from '../log';
import { toStatus } from './errors';
import { reportFailure } from './unary';

/** What a server-streaming method serves: frames until they end or the call is cancelled, then `close`. */
export interface FrameSource<Res> {
  frames: AsyncIterable<Res> | Iterable<Res>;
  close(): Promise<void>;
}

/**
 * Writes `frame` and resolves once it has left for the caller (grpc-js calls a write back when HTTP/2 flow control let
 * it out: the caller's window had room), or once the call is cancelled (the caller went away: the callback may never
 * come). Waiting for `call.write` to return false instead would let grpc-js's object stream buffer 16 frames first.
 */
const written = async <Req, Res>(call: ServerWritableStream<Req, Res>, frame: Res): Promise<void> => {
  // The listener of the event that did not happen is removed (a long stream would pile them up otherwise).
  const settled = new AbortController();
  try {
    await Promise.race([
      new Promise<void>((resolve) => call.write(frame, () => resolve())),
      once(call, 'cancelled', { signal: settled.signal }).then(() => undefined),
    ]);
  } finally {
    settled.abort();
  }
};

/**
 * Turns `open` into a grpc-js server-streaming handler. A failure of `open` (a bad request) is the call's status, as
 * a unary error would be. Writes respect the stream's flow control, a frame at a time: the next frame is read from the
 * source only once the last one has left, so a slow caller holds the source back instead of growing this process's
 * memory, and what the source reads is never more than a frame ahead of the caller (an export read slowly shows
 * content erased meanwhile as erased, instead of having read it ahead in clear). Per frame, not per item: a frame is
 * a page of events or a chunk of a file.
 */
export const serverStreamHandler =
  <Req, Res>(logger: Logger, method: string, open: (request: Req) => Promise<FrameSource<Res>>): handleServerStreamingCall<Req, Res> =>
  (call) => {
    const serve = async (): Promise<void> => {
      let source: FrameSource<Res> | null = null;
      const stop = (): void => void source?.close();
      call.once('cancelled', stop);
      try {
        source = await open(call.request);
        if (call.cancelled) return;
        for await (const frame of source.frames) {
          if (call.cancelled) break;
          await written(call, frame);
        }
        if (!call.cancelled) call.end();
      } catch (error) {
        reportFailure(logger, method, error);
        if (!call.cancelled) call.emit('error', toStatus(error));
      } finally {
        call.off('cancelled', stop);
        await source?.close();
      }
    };
    void serve();
  };
