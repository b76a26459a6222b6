import { EventEmitter } from 'node:events';
import { AppError } from '../errors';
import type { CallBatch } from '../generated/wagw/call/v1/CallBatch';
import type { CallReply } from '../generated/wagw/call/v1/CallReply';
import { CallStreamClient, type CallStream } from './callClient';
import { NOT_STARTED } from './callServer';
import { loadSessionsProto } from './proto';

/** A stand-in for a Call stream: records the frames written, lets the test answer or break it. */
class FakeCall extends EventEmitter {
  readonly frames: CallBatch[] = [];
  cancelled = false;
  write(frame: CallBatch): boolean {
    this.frames.push(frame);
    return true;
  }
  cancel(): void {
    this.cancelled = true;
  }
  /** The calls written so far, in order. */
  get items() {
    return this.frames.flatMap((frame) => frame.items ?? []);
  }
  reply(items: CallReply[]): void {
    this.emit('data', { items });
  }
}

const definition = loadSessionsProto().Sessions.service;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const usage = (queued: number) => definition.SendUsage.responseSerialize({ queued, queueMax: 10, today: 0, dailyCap: 0 });

describe('CallStreamClient', () => {
  let calls: FakeCall[];
  let client: CallStreamClient<typeof definition>;
  beforeEach(() => {
    calls = [];
    const open = (): CallStream => {
      const call = new FakeCall();
      calls.push(call);
      return call as unknown as CallStream;
    };
    client = new CallStreamClient(definition, open, { service: 'sessions', streams: 1 });
  });
  afterEach(() => client.close());

  it('sends the calls of one turn as one frame, each encoded with its method type, and matches answers and errors by id', async () => {
    const first = client.call('SendUsage', { instanceId: 'I1' }, 1_000);
    const second = client.call('GetQr', { instanceId: 'I2', waitMs: 5 }, 1_000);
    await nextTurn();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.frames).toHaveLength(1);
    const [a, b] = calls[0]!.items;
    expect(a!.method).toBe('SendUsage');
    expect(definition.GetQr.requestDeserialize(b!.request as Buffer)).toMatchObject({ instanceId: 'I2', waitMs: 5 });
    calls[0]!.reply([
      { id: b!.id, error: { kind: 'not_found', code: 'instance_not_found', message: 'Instance not found' } },
      { id: a!.id, reply: usage(3) },
    ]);
    await expect(first).resolves.toMatchObject({ queued: 3, queueMax: 10 });
    await expect(second).rejects.toMatchObject({ kind: 'not_found', code: 'instance_not_found', message: 'Instance not found' });
    // The next turn's calls are the next frame on the same stream.
    void client.call('SendUsage', { instanceId: 'I1' }, 1_000).catch(() => undefined);
    await nextTurn();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.frames).toHaveLength(2);
  });

  it('fails what a broken stream carried with a 503, and opens a new stream for the next call', async () => {
    const lost = client.call('SendUsage', { instanceId: 'I1' }, 1_000);
    const unsent = client.call('SendUsage', { instanceId: 'I1' }, 1_000);
    // Broken within the turn: the second call is never written, and fails too.
    calls[0]!.emit('error', new Error('connection reset'));
    await expect(lost).rejects.toBeInstanceOf(AppError);
    await expect(lost).rejects.toMatchObject({ kind: 'unavailable', code: 'service_unavailable' });
    await expect(unsent).rejects.toMatchObject({ kind: 'unavailable', code: 'service_unavailable' });
    await nextTurn();
    expect(calls[0]!.frames).toHaveLength(0);
    expect(calls[0]!.cancelled).toBe(true);
    const next = client.call('SendUsage', { instanceId: 'I1' }, 1_000);
    await nextTurn();
    expect(calls).toHaveLength(2);
    calls[1]!.reply([{ id: calls[1]!.items[0]!.id, reply: usage(1) }]);
    await expect(next).resolves.toMatchObject({ queued: 1 });
  });

  it('fails the calls in flight when the service ends the stream', async () => {
    const lost = client.call('Send', { instanceId: 'I1', to: '4915112345678', type: 'text', text: 'hi' }, 1_000);
    await nextTurn();
    calls[0]!.emit('end');
    await expect(lost).rejects.toMatchObject({ kind: 'unavailable', code: 'service_unavailable' });
  });

  it('sends a call the service refused unstarted once more, on a new stream; a second refusal is a 503', async () => {
    const call = client.call('SendUsage', { instanceId: 'I1' }, 1_000);
    await nextTurn();
    const refuse = (fake: FakeCall) => fake.reply([{ id: fake.items[0]!.id, error: { kind: 'unavailable', code: NOT_STARTED, message: 'restarting' } }]);
    refuse(calls[0]!);
    await nextTurn();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.items[0]!.method).toBe('SendUsage');
    refuse(calls[1]!);
    await expect(call).rejects.toMatchObject({ kind: 'unavailable', code: NOT_STARTED });
  });

  it('gives up on an answer that does not come in time, and ignores it if it comes later', async () => {
    const slow = client.call('SendUsage', { instanceId: 'I1' }, 50);
    await expect(slow).rejects.toMatchObject({ kind: 'unavailable', code: 'service_timeout' });
    expect(() => calls[0]!.reply([{ id: calls[0]!.items[0]!.id, reply: usage(1) }])).not.toThrow();
  });

  it('refuses a method that is not unary', async () => {
    await expect(client.call('Call', {}, 1_000)).rejects.toThrow('Call is not a unary method of the sessions service');
  });

  it('fails every call in flight when closed', async () => {
    const pending = client.call('SendUsage', { instanceId: 'I1' }, 1_000);
    await nextTurn();
    client.close();
    await expect(pending).rejects.toMatchObject({ kind: 'unavailable', code: 'service_unavailable' });
  });
});
