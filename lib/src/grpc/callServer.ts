import type { handleBidiStreamingCall, MethodDefinition, ServiceDefinition, UntypedServiceImplementation } from '@grpc/grpc-js';
import { TurnBatcher } from '../concurrency/turnBatcher';
import { unavailable } from '../errors';
import type { Logger } from '../log';
import type { CallBatch__Output } from '../generated/wagw/call/v1/CallBatch';
import type { CallReply } from '../generated/wagw/call/v1/CallReply';
import type { CallRequest__Output } from '../generated/wagw/call/v1/CallRequest';
import type { ReplyBatch } from '../generated/wagw/call/v1/ReplyBatch';
import { fitsAFrame, framesOf, itemBytes, tooLargeForFrame } from './callFrames';
import { toErrorDetail } from './errors';
import { plainUnaryOf, reportFailure, type PlainUnary } from './unary';

/** The code of a call refused because the service is stopping: it never ran, so the caller may send it again. */
export const NOT_STARTED = 'service_restarting';

/** A unary method's codec and use case, as the Call stream runs it. */
interface Runnable {
  method: MethodDefinition<unknown, unknown>;
  run: PlainUnary;
}

export interface CallStreamServer {
  handler: handleBidiStreamingCall<CallBatch__Output, ReplyBatch>;
  /** Refuses new calls (as not started) and ends every open stream once its calls in flight are answered. */
  drain(): void;
}

/** The service's unary methods made with unaryHandler, by name: what a Call frame may name. */
const runnables = (definition: ServiceDefinition, handlers: UntypedServiceImplementation): Map<string, Runnable> => {
  const table = new Map<string, Runnable>();
  for (const [name, method] of Object.entries(definition)) {
    const run = plainUnaryOf(handlers[name]);
    if (run && !method.requestStream && !method.responseStream) table.set(name, { method: method as MethodDefinition<unknown, unknown>, run });
  }
  return table;
};

const replyBytes = ({ reply, error }: CallReply): number => itemBytes(reply, error?.kind, error?.code, error?.message);

/** A reply too large for a frame fails its own call (response_too_large), not the stream with every call on it. */
const fitting = (method: string, reply: Buffer): Buffer => {
  if (!fitsAFrame(itemBytes(reply))) throw tooLargeForFrame('reply', method, reply.length);
  return reply;
};

/**
 * The server side of a service's `Call` stream (proto/call.proto), one adapter for every service: each call of a
 * frame is decoded with its method's request type and run by the same function as the unary method, all of a
 * frame's calls together; the answers of one event-loop turn go back as one frame (or several, see callFrames), and
 * an answer too large for any frame as an error of its call. Errors travel as AppError fields, so the caller maps
 * them to HTTP exactly as a unary status. A stream ends once the caller has ended it and every call it carried is
 * answered.
 */
export const callStreamServer = (definition: ServiceDefinition, handlers: UntypedServiceImplementation, logger: Logger): CallStreamServer => {
  const table = runnables(definition, handlers);
  const streams = new Set<() => void>();
  let draining = false;

  const handler: handleBidiStreamingCall<CallBatch__Output, ReplyBatch> = (call) => {
    let inFlight = 0;
    let ended = false;
    let finished = false;
    const finish = (): void => {
      if (finished || !ended || inFlight > 0) return;
      finished = true;
      streams.delete(end);
      if (!call.cancelled) call.end();
    };
    const out = new TurnBatcher<CallReply>((items) => {
      if (finished || call.cancelled) return;
      for (const frame of framesOf(items, replyBytes)) call.write({ items: frame });
      finish();
    });
    const answer = (reply: CallReply): void => {
      inFlight--;
      out.push(reply);
    };
    // After any answers already queued for this turn have been written.
    const end = (): void => {
      ended = true;
      setImmediate(finish);
    };
    streams.add(end);
    const run = ({ id, method: name, request }: CallRequest__Output): void => {
      inFlight++;
      const runnable = table.get(name);
      if (draining || ended) return answer({ id, error: toErrorDetail(unavailable(NOT_STARTED, 'The service is restarting; retry')) });
      if (!runnable) {
        // A caller of another release (a rolling upgrade under way): unavailable here, answered by the next replica or
        // after the upgrade, so the client retries rather than taking it as a bug of its request.
        logger.warn({ method: name }, 'call of an unknown method');
        return answer({ id, error: toErrorDetail(unavailable('unknown_method', `This service offers no unary method ${name} (another release?)`)) });
      }
      // A request that does not decode fails like a handler's error (internal), never the whole stream.
      Promise.resolve()
        .then(() => runnable.run(runnable.method.requestDeserialize(request)))
        .then((response) => fitting(name, runnable.method.responseSerialize(response)))
        .then(
          (reply) => answer({ id, reply }),
          (error: unknown) => {
            reportFailure(logger, name, error);
            answer({ id, error: toErrorDetail(error) });
          },
        );
    };
    call.on('data', (batch: CallBatch__Output) => batch.items.forEach(run));
    call.on('end', end);
    call.on('cancelled', () => {
      finished = true;
      streams.delete(end);
    });
    call.on('error', (error) => logger.warn({ err: error }, 'call stream failed'));
  };

  return {
    handler,
    drain: () => {
      draining = true;
      for (const end of streams) end();
    },
  };
};
