import type { ClientDuplexStream, ServiceDefinition } from '@grpc/grpc-js';
import type { MethodName, ReplyOf, RequestOf } from './callTypes';
import { TurnBatcher } from '../concurrency/turnBatcher';
import { unavailable } from '../errors';
import type { CallBatch } from '../generated/wagw/call/v1/CallBatch';
import type { CallRequest } from '../generated/wagw/call/v1/CallRequest';
import type { ReplyBatch__Output } from '../generated/wagw/call/v1/ReplyBatch';
import { NOT_STARTED } from './callServer';
import { fitsAFrame, framesOf, itemBytes, tooLargeForFrame } from './callFrames';
import { fromErrorDetail } from './errors';

export type CallStream = ClientDuplexStream<CallBatch, ReplyBatch__Output>;

interface Pending {
  method: string;
  request: Buffer;
  resolve: (reply: Buffer) => void;
  reject: (error: Error) => void;
  deadline: number;
  /** Sent again once already, after the service refused it unstarted. */
  resent: boolean;
}

interface Lane {
  call: CallStream;
  pending: Map<number, Pending>;
  out: TurnBatcher<CallRequest>;
  broken: boolean;
}

export interface CallClientOptions {
  /** The service's name in error messages ("instances"). */
  service: string;
  /** Streams kept open: the round-robin balancer places each on a replica. */
  streams?: number;
}

/**
 * The client side of a service's `Call` stream (proto/call.proto), one for every service: `call(method, request)`
 * encodes the request with the unary method's own type, and the calls of one event-loop turn go out as one frame
 * on one of a few long-lived streams; answers come back as frames matched by id. A stream that breaks (the
 * service restarted, a network failure) fails the calls it carried with a 503 (never retried: they may have run)
 * and is opened again by the next call. A call the service refused before running it (it was stopping) is sent
 * once more on a fresh stream. A call without an answer by its deadline fails with a 503. A request or reply too
 * large for a frame (MAX_MESSAGE_BYTES) fails its own call only: 413 request_too_large, 500 response_too_large.
 */
export class CallStreamClient<Definition extends ServiceDefinition> {
  private readonly lanes: Array<Lane | null>;
  /** Every stream with calls that may still be answered: the open lanes and those retired while their service drains. */
  private readonly live = new Set<Lane>();
  private next = 0;
  private nextId = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly definition: Definition,
    private readonly open: () => CallStream,
    private readonly options: CallClientOptions,
  ) {
    this.lanes = Array.from({ length: options.streams ?? 2 }, () => null);
    this.sweeper = setInterval(() => this.expire(Date.now()), 250);
    this.sweeper.unref();
  }

  /** Calls the unary method `method`; a failure rejects with an AppError (the service's own, or a 503). */
  async call<M extends MethodName<Definition>>(method: M, request: RequestOf<Definition[M]>, timeoutMs: number): Promise<ReplyOf<Definition[M]>> {
    // A method name, though TypeScript cannot narrow a key of a generic mapped type to string.
    const name = method as string;
    const codec = this.definition[method];
    if (!codec || codec.requestStream || codec.responseStream) throw new Error(`${name} is not a unary method of the ${this.options.service} service`);
    const encoded = codec.requestSerialize(request);
    // Sent anyway, it would be refused by the service and break the stream with every call on it.
    if (!fitsAFrame(itemBytes(encoded, name))) throw tooLargeForFrame('request', name, encoded.length);
    const reply = await new Promise<Buffer>((resolve, reject) =>
      this.dispatch({ method: name, request: encoded, resolve, reject, deadline: Date.now() + timeoutMs, resent: false }),
    );
    return codec.responseDeserialize(reply) as ReplyOf<Definition[M]>;
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const lane of this.live) this.fail(lane, unavailable('service_unavailable', 'The gateway is shutting down'));
  }

  private dispatch(pending: Pending, index = this.roundRobin()): void {
    const lane = this.lanes[index] ?? this.openLane(index);
    const id = (this.nextId = (this.nextId + 1) % 0xffffffff);
    lane.pending.set(id, pending);
    lane.out.push({ id, method: pending.method, request: pending.request });
  }

  private roundRobin(): number {
    const index = this.next;
    this.next = (this.next + 1) % this.lanes.length;
    return index;
  }

  private openLane(index: number): Lane {
    const call = this.open();
    const lane: Lane = {
      call,
      pending: new Map(),
      // A lane that broke before its turn ended has failed these calls already.
      out: new TurnBatcher((items) => {
        if (lane.broken) return;
        for (const frame of framesOf(items, (item) => itemBytes(item.request, item.method))) call.write({ items: frame });
      }),
      broken: false,
    };
    this.lanes[index] = lane;
    this.live.add(lane);
    call.on('data', (batch: ReplyBatch__Output) => {
      for (const { id, reply, error } of batch.items) {
        const pending = lane.pending.get(id);
        if (!pending) continue;
        lane.pending.delete(id);
        if (!error) pending.resolve(reply);
        else if (error.code === NOT_STARTED && !pending.resent) this.resend(index, lane, pending);
        else pending.reject(fromErrorDetail(error));
      }
    });
    const broken = (): void =>
      this.fail(lane, unavailable('service_unavailable', `The ${this.options.service} service is unreachable or restarted during the call; retry`));
    call.on('error', broken);
    call.on('end', broken);
    return lane;
  }

  /** The service is stopping: this stream will end, so the call goes out on a new one (to a replica still up). */
  private resend(index: number, lane: Lane, pending: Pending): void {
    if (this.lanes[index] === lane) this.lanes[index] = null;
    this.dispatch({ ...pending, resent: true }, index);
  }

  private fail(lane: Lane, error: Error): void {
    lane.broken = true;
    this.live.delete(lane);
    const index = this.lanes.indexOf(lane);
    if (index >= 0) this.lanes[index] = null;
    for (const pending of lane.pending.values()) pending.reject(error);
    lane.pending.clear();
    lane.call.cancel();
  }

  private expire(now: number): void {
    for (const lane of this.live) {
      for (const [id, pending] of lane.pending) {
        if (pending.deadline > now) continue;
        lane.pending.delete(id);
        pending.reject(unavailable('service_timeout', `The ${this.options.service} service did not answer in time`));
      }
    }
  }
}
