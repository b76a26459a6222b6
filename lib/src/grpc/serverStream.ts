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
 * Writes `frame` and resolves once it has left for the caller (grpc-js calls a write back when HTTP/2 flow control let
 * it out: the caller's window had room), or once the call is cancelled (the caller went away: the callback may never
 * come). Waiting for `call.write` to return false instead lets grpc-js's object stream buffer 16 frames first.
 */
const written = async <Req, Res>(call: ServerWritableStream<Req, Res>, frame: Res): Promise<void> => {
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

export interface ServerStreamPacing {
  /**
   * A frame at a time: the next frame is read from the source only once the last one has left, so the source is never
   * more than a frame ahead of the caller (an export read slowly shows content erased meanwhile as erased, instead of
   * having read it ahead in clear). Off: frames are written until the stream's buffer (16 frames) is full, as before,
   * for streams of small frames whose reading ahead reveals nothing (the live events: one frame per event; a
   * round trip to the socket per event would bound a reader's rate, and `BENCH_ONLY=events` could not tell either way:
   * its p50 ranged from 5 ms to 1.4 s over runs of one build within an hour on this machine).
   */
  frameAtATime?: boolean;
}

/**
 * Turns `open` into a grpc-js server-streaming handler. A failure of `open` (a bad request) is the call's status, as
 * a unary error would be. Writes respect the stream's flow control: the source is not read while the caller's window
 * is full, so a slow caller holds the source back instead of growing this process's memory; `frameAtATime` holds it
 * to one frame ahead (ServerStreamPacing).
 */
export const serverStreamHandler =
  <Req, Res>(
    logger: Logger,
    method: string,
    open: (request: Req) => Promise<FrameSource<Res>>,
    { frameAtATime = false }: ServerStreamPacing = {},
  ): handleServerStreamingCall<Req, Res> =>
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
          if (frameAtATime) await written(call, frame);
          else if (!call.write(frame)) await drained(call);
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
