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

/** Resolves once the stream's buffer has drained, or once the call is cancelled (the caller went away). */
const drained = async <Req, Res>(call: ServerWritableStream<Req, Res>): Promise<void> => {
  // The listener of the event that did not happen is removed (a long stream would pile them up otherwise).
  const settled = new AbortController();
  try {
    await Promise.race([once(call, 'drain', { signal: settled.signal }), once(call, 'cancelled', { signal: settled.signal })]);
  } finally {
    settled.abort();
  }
};

/**
 * Turns `open` into a grpc-js server-streaming handler. A failure of `open` (a bad request) is the call's status, as
 * a unary error would be. Writes respect the stream's flow control: the source is not read while the caller's
 * window is full, so a slow caller holds the source back instead of growing this process's memory.
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
          if (!call.write(frame)) await drained(call);
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
