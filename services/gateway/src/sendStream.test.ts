import { EventEmitter } from 'node:events';
import type { ClientDuplexStream } from '@grpc/grpc-js';
import { AppError, type SendBatch, type SendResultsMessage } from '@wagw/lib';
import { SendStreamClient } from './sendStream';

/** A stand-in for a SendStream call: records the frames written, lets the test answer or break it. */
class FakeCall extends EventEmitter {
  readonly frames: SendBatch[] = [];
  cancelled = false;
  write(frame: SendBatch): boolean {
    this.frames.push(frame);
    return true;
  }
  cancel(): void {
    this.cancelled = true;
  }
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const request = (to: string) => ({ account: 'acme', instanceId: 'I1', to, type: 'text', text: 'hi', mediaUrl: '', filename: '', idempotencyKey: '' });

describe('SendStreamClient', () => {
  let calls: FakeCall[];
  let client: SendStreamClient;
  beforeEach(() => {
    calls = [];
    client = new SendStreamClient(
      () => {
        const call = new FakeCall();
        calls.push(call);
        return call as unknown as ClientDuplexStream<SendBatch, SendResultsMessage>;
      },
      200,
      1,
    );
  });
  afterEach(() => client.close());

  it('sends the requests of one turn as one frame and matches answers and errors by id', async () => {
    const first = client.send(request('111111111'));
    const second = client.send(request('222222222'));
    await nextTurn();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.frames).toHaveLength(1);
    const [a, b] = calls[0]!.frames[0]!.items!;
    calls[0]!.emit('data', {
      items: [
        { id: b!.id, messageId: '', error: { kind: 'not_found', code: 'instance_not_found', message: 'Instance not found' } },
        { id: a!.id, messageId: 'm_1', error: null },
      ],
    });
    await expect(first).resolves.toBe('m_1');
    await expect(second).rejects.toMatchObject({ kind: 'not_found', code: 'instance_not_found' });
  });

  it('fails what a broken stream carried as unavailable, and opens a new stream for the next send', async () => {
    const lost = client.send(request('111111111'));
    await nextTurn();
    calls[0]!.emit('error', new Error('connection reset'));
    await expect(lost).rejects.toBeInstanceOf(AppError);
    await expect(lost).rejects.toMatchObject({ kind: 'unavailable', code: 'sessions_unavailable' });
    void client.send(request('222222222')).catch(() => undefined);
    await nextTurn();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.frames).toHaveLength(1);
  });

  it('gives up on an answer that does not come in time', async () => {
    const slow = client.send(request('111111111'));
    await expect(slow).rejects.toMatchObject({ kind: 'unavailable', code: 'service_timeout' });
  });
});
