import { EventEmitter } from 'node:events';
import { credentials, type ServerDuplexStream, type ServiceError } from '@grpc/grpc-js';
import pino from 'pino';
import { AppError, notFound } from '../errors';
import type { CallBatch__Output } from '../generated/wagw/call/v1/CallBatch';
import type { ReplyBatch } from '../generated/wagw/call/v1/ReplyBatch';
import type { SessionsClient } from '../generated/wagw/sessions/v1/Sessions';
import { balancedChannelOptions } from './channel';
import { CallStreamClient } from './callClient';
import { callStreamServer, NOT_STARTED } from './callServer';
import { fromServiceError } from './errors';
import { MAX_MESSAGE_BYTES } from './messageSize';
import { loadSessionsProto } from './proto';
import { startGrpcServer, type GrpcServer } from './server';
import { unaryHandler } from './unary';

const proto = loadSessionsProto();
const definition = proto.Sessions.service;
const logger = pino({ level: 'silent' });
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Over a gRPC message (4 MiB): a pairing code asked for this number answers 5 MiB. */
const HUGE = '4900000000000';

/**
 * Unary methods: one answers, one fails with an AppError, one with an AppError that says when to retry, one answers 700 KB (5 MiB for HUGE), one waits for the
 * test to release it.
 */
const handlers = () => {
  const held: Array<() => void> = [];
  return {
    held,
    handlers: {
      SendUsage: unaryHandler(logger, 'SendUsage', async (r: { instanceId: string }) => ({ queued: r.instanceId.length, queueMax: 5, today: 0, dailyCap: 0 })),
      GetQr: unaryHandler(logger, 'GetQr', async (): Promise<{ qr: string }> => {
        throw notFound('instance_not_found', 'Instance not found');
      }),
      CheckNumbers: unaryHandler(logger, 'CheckNumbers', async (): Promise<{ results: [] }> => {
        throw new AppError('rate_limited', 'number_checks_throttled', 'Too many number checks', { retryAfterS: 42 });
      }),
      GetPairingCode: unaryHandler(logger, 'GetPairingCode', async (r: { number: string }) => ({
        code: 'x'.repeat(r.number === HUGE ? 5 * 1024 * 1024 : 700 * 1024),
      })),
      Reconnect: unaryHandler(logger, 'Reconnect', () => new Promise<{ success: boolean }>((resolve) => held.push(() => resolve({ success: true })))),
    },
  };
};

/** A stand-in for the server side of a Call stream: frames in by `emit('data')`, frames out recorded. */
class FakeServerCall extends EventEmitter {
  readonly written: ReplyBatch[] = [];
  cancelled = false;
  ended = false;
  write(frame: ReplyBatch): boolean {
    this.written.push(frame);
    return true;
  }
  end(): void {
    this.ended = true;
  }
}

const frame = (...items: Array<{ id: number; method: string; request: Buffer }>): CallBatch__Output => ({ items });
const usageRequest = (instanceId: string) => definition.SendUsage.requestSerialize({ instanceId });

describe('callStreamServer', () => {
  it('runs the calls of a frame with the unary handlers and answers those of one turn as one frame', async () => {
    const server = callStreamServer(definition, handlers().handlers, logger);
    const call = new FakeServerCall();
    server.handler(call as unknown as ServerDuplexStream<CallBatch__Output, ReplyBatch>);
    call.emit(
      'data',
      frame(
        { id: 1, method: 'SendUsage', request: usageRequest('abc') },
        { id: 2, method: 'GetQr', request: definition.GetQr.requestSerialize({ instanceId: 'x' }) },
        { id: 3, method: 'Nope', request: Buffer.alloc(0) },
      ),
    );
    await nextTurn();
    await nextTurn();
    expect(call.written).toHaveLength(1);
    const byId = new Map(call.written[0]!.items!.map((item) => [item.id, item]));
    expect(definition.SendUsage.responseDeserialize(byId.get(1)!.reply as Buffer)).toMatchObject({ queued: 3, queueMax: 5 });
    expect(byId.get(2)!.error).toEqual({ kind: 'not_found', code: 'instance_not_found', message: 'Instance not found' });
    expect(byId.get(3)!.error).toMatchObject({ kind: 'unavailable', code: 'unknown_method' });
    // The caller ends the stream: it is ended in turn, everything answered.
    call.emit('end');
    await nextTurn();
    expect(call.ended).toBe(true);
  });

  it('splits a turn of large replies into frames of about 1 MiB (grpc-js refuses messages over 4 MiB)', async () => {
    const server = callStreamServer(definition, handlers().handlers, logger);
    const call = new FakeServerCall();
    server.handler(call as unknown as ServerDuplexStream<CallBatch__Output, ReplyBatch>);
    const request = definition.GetPairingCode.requestSerialize({ instanceId: 'a', number: '4915112345678' });
    call.emit('data', frame(...[1, 2, 3, 4].map((id) => ({ id, method: 'GetPairingCode', request }))));
    await nextTurn();
    await nextTurn();
    expect(call.written.map((f) => f.items!.map((item) => item.id))).toEqual([[1], [2], [3], [4]]);
    expect(definition.GetPairingCode.responseDeserialize(call.written[3]!.items![0]!.reply as Buffer)).toEqual({ code: 'x'.repeat(700 * 1024) });
  });

  it('answers a reply too large for any frame as the error of its call; the frames of the turn stay within the limit', async () => {
    const server = callStreamServer(definition, handlers().handlers, logger);
    const call = new FakeServerCall();
    server.handler(call as unknown as ServerDuplexStream<CallBatch__Output, ReplyBatch>);
    const pairing = (number: string) => definition.GetPairingCode.requestSerialize({ instanceId: 'a', number });
    call.emit(
      'data',
      frame(
        { id: 1, method: 'GetPairingCode', request: pairing(HUGE) },
        { id: 2, method: 'SendUsage', request: usageRequest('abc') },
        { id: 3, method: 'GetPairingCode', request: pairing('4915112345678') },
      ),
    );
    await nextTurn();
    await nextTurn();
    const items = call.written.flatMap((f) => f.items!).sort((a, b) => a.id! - b.id!);
    expect(items.map((item) => [item.id, item.error?.code ?? 'reply'])).toEqual([
      [1, 'response_too_large'],
      [2, 'reply'],
      [3, 'reply'],
    ]);
    expect(items[0]!.error).toMatchObject({ kind: 'internal' });
    for (const written of call.written) expect(definition.Call.responseSerialize(written).length).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
  });

  it('when draining, answers what runs, refuses new calls unstarted and then ends the stream', async () => {
    const { handlers: impl, held } = handlers();
    const server = callStreamServer(definition, impl, logger);
    const call = new FakeServerCall();
    server.handler(call as unknown as ServerDuplexStream<CallBatch__Output, ReplyBatch>);
    call.emit('data', frame({ id: 1, method: 'Reconnect', request: definition.Reconnect.requestSerialize({ instanceId: 'a' }) }));
    await nextTurn();
    server.drain();
    call.emit('data', frame({ id: 2, method: 'SendUsage', request: usageRequest('b') }));
    await nextTurn();
    expect(call.written.flatMap((f) => f.items)).toEqual([{ id: 2, error: expect.objectContaining({ kind: 'unavailable', code: NOT_STARTED }) }]);
    expect(call.ended).toBe(false);
    held.forEach((release) => release());
    await nextTurn();
    await nextTurn();
    expect(call.written.flatMap((f) => f.items).map((item) => item!.id)).toEqual([2, 1]);
    expect(call.ended).toBe(true);
  });
});

describe('the Call stream over gRPC', () => {
  let server: GrpcServer | null = null;
  let client: SessionsClient;
  let calls: CallStreamClient<typeof definition>;
  let held: Array<() => void> = [];
  const start = async (port = 0) => {
    const made = handlers();
    held = made.held;
    return (server = await startGrpcServer(definition, made.handlers, `127.0.0.1:${port}`, logger));
  };
  afterEach(async () => {
    calls.close();
    client.close();
    await server?.close();
    server = null;
  });

  it('serves the same handlers as the unary methods, maps errors, and recovers after the service restarts', async () => {
    const { port } = await start();
    client = new proto.Sessions(`127.0.0.1:${port}`, credentials.createInsecure(), balancedChannelOptions);
    calls = new CallStreamClient(definition, () => client.Call(), { service: 'sessions' });
    await expect(calls.call('SendUsage', { instanceId: 'abcd' }, 2_000)).resolves.toMatchObject({ queued: 4 });
    await expect(calls.call('GetQr', { instanceId: 'x' }, 2_000)).rejects.toMatchObject({ kind: 'not_found', code: 'instance_not_found' });
    // The unary method still answers other callers with the same handler.
    const unary = await new Promise((resolve, reject) => client.SendUsage({ instanceId: 'ab' }, (error, reply) => (error ? reject(error) : resolve(reply))));
    expect(unary).toMatchObject({ queued: 2 });
    // The wait a service knows (a 429's Retry-After) arrives with its error, on the Call stream and as a unary status.
    const throttled = { kind: 'rate_limited', code: 'number_checks_throttled', retryAfterS: 42 };
    await expect(calls.call('CheckNumbers', { instanceId: 'x', numbers: ['4915112345678'] }, 2_000)).rejects.toMatchObject(throttled);
    const status = await new Promise<ServiceError>((resolve) => client.CheckNumbers({ instanceId: 'x', numbers: [] }, (error) => resolve(error!)));
    expect(fromServiceError(status)).toMatchObject(throttled);

    await server!.close();
    server = null;
    // Down: a clear 503, quickly (no hang).
    const down = Date.now();
    await expect(calls.call('SendUsage', { instanceId: 'a' }, 5_000)).rejects.toMatchObject({ kind: 'unavailable' });
    expect(Date.now() - down).toBeLessThan(4_000);

    await start(port);
    let answer: unknown = null;
    for (let attempt = 0; attempt < 50 && !answer; attempt++) {
      answer = await calls.call('SendUsage', { instanceId: 'abc' }, 2_000).catch(() => null);
      if (!answer) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(answer).toMatchObject({ queued: 3 });
  });

  it('fails a reply too large for a frame on its own: a call in flight on the same stream is answered, the stream stays open', async () => {
    const { port } = await start();
    client = new proto.Sessions(`127.0.0.1:${port}`, credentials.createInsecure(), balancedChannelOptions);
    let opened = 0;
    calls = new CallStreamClient(
      definition,
      () => {
        opened++;
        return client.Call();
      },
      { service: 'sessions', streams: 1 },
    );
    const waiting = calls.call('Reconnect', { instanceId: 'a' }, 5_000);
    await expect(calls.call('GetPairingCode', { instanceId: 'a', number: HUGE }, 5_000)).rejects.toMatchObject({
      kind: 'internal',
      code: 'response_too_large',
    });
    held.forEach((release) => release());
    await expect(waiting).resolves.toEqual({ success: true });
    await expect(calls.call('GetPairingCode', { instanceId: 'a', number: '4915112345678' }, 5_000)).resolves.toMatchObject({ code: expect.any(String) });
    expect(opened).toBe(1);
  });

  it('refuses a request too large for a frame before sending it (413), without breaking the stream', async () => {
    const { port } = await start();
    client = new proto.Sessions(`127.0.0.1:${port}`, credentials.createInsecure(), balancedChannelOptions);
    calls = new CallStreamClient(definition, () => client.Call(), { service: 'sessions', streams: 1 });
    const waiting = calls.call('Reconnect', { instanceId: 'a' }, 5_000);
    await expect(calls.call('SendUsage', { instanceId: 'x'.repeat(5 * 1024 * 1024) }, 5_000)).rejects.toMatchObject({
      kind: 'too_large',
      code: 'request_too_large',
    });
    for (let turn = 0; turn < 100 && held.length === 0; turn++) await new Promise((resolve) => setTimeout(resolve, 20));
    held.forEach((release) => release());
    await expect(waiting).resolves.toEqual({ success: true });
  });
});
