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

describe('callServerStream', () => {
  it('fails as a 503 service_timeout, and cancels the call, when the first item does not come in time', async () => {
    const call = fakeCall();
    const items = callServerStream(call.method, 'request', 50);
    const started = Date.now();
    const error = await items.next().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    expect([(error as AppError).kind, (error as AppError).code]).toEqual(['unavailable', 'service_timeout']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(call.cancelled()).toBe(true);
  });

  it('bounds the first item only: a stream that started may go on as long as it is read', async () => {
    const call = fakeCall();
    const items = callServerStream(call.method, 'request', 50);
    setTimeout(() => call.stream.write('head'), 10);
    expect(await items.next()).toEqual({ done: false, value: 'head' });
    await sleep(120);
    call.stream.write('late chunk');
    call.stream.end();
    expect(await items.next()).toEqual({ done: false, value: 'late chunk' });
    expect(await items.next()).toEqual({ done: true, value: undefined });
    expect(call.cancelled()).toBe(true); // the finally's cancel of a finished call is a no-op in grpc-js
  });
});
