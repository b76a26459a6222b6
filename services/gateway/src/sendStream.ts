import type { ClientDuplexStream } from '@grpc/grpc-js';
import { fromErrorDetail, TurnBatcher, unavailable, type SendBatch, type SendRequest, type SendResultsMessage } from '@wagw/lib';

interface Pending {
  resolve: (messageId: string) => void;
  reject: (error: Error) => void;
  deadline: number;
}

interface Lane {
  call: ClientDuplexStream<SendBatch, SendResultsMessage>;
  pending: Map<number, Pending>;
  out: TurnBatcher<{ id: number; request: SendRequest }>;
}

/**
 * Sends over a few long-lived SendStream calls instead of one unary call per request: the sends of one event-loop
 * turn go out as one frame and come back as frames of answers matched by id. Several streams spread the load over
 * sessions replicas (the round-robin balancer places each call). A stream that fails fails what it carried
 * (503: the caller retries with its Idempotency-Key) and is opened again on the next send.
 */
export class SendStreamClient {
  private readonly lanes: Array<Lane | null>;
  private next = 0;
  private nextId = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly open: () => ClientDuplexStream<SendBatch, SendResultsMessage>,
    private readonly timeoutMs: number,
    streams = 2,
  ) {
    this.lanes = Array.from({ length: streams }, () => null);
    this.sweeper = setInterval(() => this.expire(Date.now()), 500);
    this.sweeper.unref();
  }

  send(request: SendRequest): Promise<string> {
    const index = this.next;
    this.next = (this.next + 1) % this.lanes.length;
    const lane = this.lanes[index] ?? this.openLane(index);
    const id = (this.nextId = (this.nextId + 1) % 0xffffffff);
    return new Promise((resolve, reject) => {
      lane.pending.set(id, { resolve, reject, deadline: Date.now() + this.timeoutMs });
      lane.out.push({ id, request });
    });
  }

  close(): void {
    clearInterval(this.sweeper);
    this.lanes.forEach((lane, index) => lane && this.fail(index, lane, unavailable('sessions_unavailable', 'The gateway is shutting down')));
  }

  private openLane(index: number): Lane {
    const call = this.open();
    const lane: Lane = { call, pending: new Map(), out: new TurnBatcher((items) => call.write({ items })) };
    this.lanes[index] = lane;
    call.on('data', (results: SendResultsMessage) => {
      for (const result of results.items) {
        const pending = lane.pending.get(result.id);
        if (!pending) continue;
        lane.pending.delete(result.id);
        if (result.error) pending.reject(fromErrorDetail(result.error));
        else pending.resolve(result.messageId);
      }
    });
    const broken = (): void =>
      this.fail(index, lane, unavailable('sessions_unavailable', 'The sessions service is unreachable; retry with the same Idempotency-Key'));
    call.on('error', broken);
    call.on('end', broken);
    return lane;
  }

  private fail(index: number, lane: Lane, error: Error): void {
    if (this.lanes[index] === lane) this.lanes[index] = null;
    for (const pending of lane.pending.values()) pending.reject(error);
    lane.pending.clear();
    lane.call.cancel();
  }

  private expire(now: number): void {
    for (const lane of this.lanes) {
      for (const [id, pending] of lane?.pending ?? []) {
        if (pending.deadline > now) continue;
        lane!.pending.delete(id);
        pending.reject(unavailable('service_timeout', 'The sessions service did not answer in time'));
      }
    }
  }
}
