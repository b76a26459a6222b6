import { PassThrough } from 'node:stream';
import { status as Status, type ClientReadableStream } from '@grpc/grpc-js';
import { AppError } from '../errors';
import { callServerStream } from './stream';

/** A server stream as grpc-js hands it to a client: readable items; cancel() ends it with CANCELLED. */
const fakeCall = (): { stream: PassThrough; cancelled: () => boolean; method: () => ClientReadableStream<string> } => {
  const stream = new PassThrough({ objectMode: true });
  let cancelled = false;
  const call = Object.assign(stream, {
    cancel: () => {
      cancelled = true;
      stream.destroy(Object.assign(new Error('Cancelled on client'), { code: Status.CANCELLED, details: 'Cancelled on client', metadata: undefined }));
    },
  });
  return { stream, cancelled: () => cancelled, method: () => call as unknown as ClientReadableStream<string> };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const failureOf = (items: AsyncGenerator<string>): Promise<unknown> =>
  items.next().then(
    () => null,
    (e: unknown) => e,
  );

describe('callServerStream', () => {
  it('fails as a 503 service_timeout, and cancels the call, when the first item does not come in time', async () => {
    const call = fakeCall();
    const started = Date.now();
    const error = await failureOf(callServerStream(call.method, 'request', { itemWithinMs: 50 }));
    expect(error).toBeInstanceOf(AppError);
    expect([(error as AppError).kind, (error as AppError).code]).toEqual(['unavailable', 'service_timeout']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(call.cancelled()).toBe(true);
  });

  it('bounds each item while it is waited for, not the time the reader takes between items', async () => {
    const call = fakeCall();
    const items = callServerStream(call.method, 'request', { itemWithinMs: 50 });
    setTimeout(() => call.stream.write('head'), 10);
    expect(await items.next()).toEqual({ done: false, value: 'head' });
    await sleep(120); // a slow reader: the stream waits for it
    call.stream.write('chunk read late');
    expect(await items.next()).toEqual({ done: false, value: 'chunk read late' });
    setTimeout(() => call.stream.write('chunk 30 ms later'), 30);
    expect(await items.next()).toEqual({ done: false, value: 'chunk 30 ms later' });
    // A stream that stalls once started fails like one that never started.
    const stalled = await failureOf(items);
    expect([(stalled as AppError).kind, (stalled as AppError).code]).toEqual(['unavailable', 'service_timeout']);
    expect(call.cancelled()).toBe(true);
  });

  it('cancels the call when its reader goes away (the signal), even while an item is waited for', async () => {
    const call = fakeCall();
    const gone = new AbortController();
    const items = callServerStream(call.method, 'request', { signal: gone.signal });
    setTimeout(() => gone.abort(), 20);
    const error = await failureOf(items);
    // Not the service's fault: no 500 in the log for a client that left.
    expect([(error as AppError).kind, (error as AppError).code]).toEqual(['unavailable', 'client_gone']);
    expect(call.cancelled()).toBe(true);
  });

  it('ends with the stream, the call then cancelled as a no-op', async () => {
    const call = fakeCall();
    const items = callServerStream(call.method, 'request', { itemWithinMs: 50 });
    call.stream.write('only');
    call.stream.end();
    expect(await items.next()).toEqual({ done: false, value: 'only' });
    expect(await items.next()).toEqual({ done: true, value: undefined });
  });
});
