import type { JsMsg } from '@nats-io/jetstream';
// The class the client answers a status with; the package exports it only from its internal entry point.
import { JetStreamStatusError } from '@nats-io/jetstream/internal';
import type { NatsHandle } from '../nats';
import { orderedScan, rangeReaderFor } from './jetStreamReader';

// orderedScan's watchdog against a scripted consumer: what counts as the server's silence, and what is done about it.

const SILENCE_MS = 40;
const END = 5;

const message = (seq: number): JsMsg =>
  ({ subject: `events.S${seq}.message`, seq, headers: undefined, header: undefined, string: () => '{}' }) as unknown as JsMsg;

/**
 * A consumer's messages: those it delivers, then nothing until it is stopped (a silent consumer). `refused`: its
 * status says no server took its pull (no_responders), as a cluster node that does not know the consumer yet answers.
 */
const messages = (seqs: number[], refused = false): AsyncIterable<JsMsg> & { stop(): void; status(): AsyncIterable<{ type: string }> } => {
  let stopped = false;
  let wake: () => void = () => undefined;
  const stop = new Promise<void>((resolve) => (wake = resolve));
  return {
    stop: () => {
      stopped = true;
      wake();
    },
    async *status() {
      if (refused) yield { type: 'no_responders' };
      await stop;
    },
    async *[Symbol.asyncIterator]() {
      for (const seq of seqs) {
        if (stopped) return;
        yield message(seq);
      }
      await stop;
    },
  };
};

/** In `delivers`: a consumer whose first pull no server takes, and that delivers nothing. */
const REFUSED = -1;

/**
 * A handle whose n-th consumer delivers the sequences from where it starts up to `delivers[n]` (then stays silent),
 * and that records where each consumer started.
 */
const scriptedNats = (delivers: number[]): { nats: NatsHandle; starts: number[] } => {
  const starts: number[] = [];
  const get = async (_stream: string, options: { opt_start_seq: number }) => {
    const from = options.opt_start_seq;
    const upTo = delivers[starts.length] ?? 0;
    starts.push(from);
    const seqs = Array.from({ length: Math.max(0, upTo - from + 1) }, (_, i) => from + i);
    return { consume: async () => messages(seqs, upTo === REFUSED) };
  };
  return { nats: { js: { consumers: { get } } } as unknown as NatsHandle, starts };
};

const read = async (nats: NatsHandle, holdMs = 0, silenceMs = SILENCE_MS): Promise<{ seqs: number[]; error: unknown }> => {
  const seqs: number[] = [];
  try {
    for await (const m of orderedScan(nats, 'EVENTS', 'events.>', 1, END, silenceMs)) {
      seqs.push(m.seq);
      if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs));
    }
    return { seqs, error: null };
  } catch (error) {
    return { seqs, error };
  }
};

describe('orderedScan', () => {
  it('reads every message to a reader that holds each one far longer than the silence limit, on one consumer', async () => {
    const { nats, starts } = scriptedNats([END]);
    // A slow export client or a webhook endpoint taking its time: the consumer has not failed to deliver.
    expect(await read(nats, SILENCE_MS * 4)).toEqual({ seqs: [1, 2, 3, 4, 5], error: null });
    expect(starts).toEqual([1]);
  });

  it('replaces a consumer that goes silent once, from the next sequence, and reads on', async () => {
    const { nats, starts } = scriptedNats([2, END]);
    expect(await read(nats)).toEqual({ seqs: [1, 2, 3, 4, 5], error: null });
    expect(starts).toEqual([1, 3]);
  });

  it('replaces at once, not after the silence limit, a consumer whose pulls no server took (a cluster node that did not know it yet)', async () => {
    const { nats, starts } = scriptedNats([REFUSED, REFUSED, END]);
    const started = Date.now();
    // A silence limit far beyond the test's time-out: only the refusal can have replaced them.
    expect(await read(nats, 0, 60_000)).toEqual({ seqs: [1, 2, 3, 4, 5], error: null });
    expect(starts).toEqual([1, 1, 1]);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('fails the read as unavailable when consumer after consumer is refused', async () => {
    const { nats } = scriptedNats(Array.from({ length: 20 }, () => REFUSED));
    expect((await read(nats, 0, 60_000)).error).toMatchObject({ code: 'event_store_unavailable' });
  });

  it('fails the read as unavailable when the consumer replacing a silent one is silent too', async () => {
    const { nats, starts } = scriptedNats([2, 3]);
    const { seqs, error } = await read(nats);
    expect(seqs).toEqual([1, 2, 3]);
    expect(error).toMatchObject({ code: 'event_store_unavailable' });
    expect(starts).toEqual([1, 3]);
  });
});

describe('batch direct reads (nats-server 2.11+)', () => {
  /** In `answers`: a replica that holds no message at or after the sequence asked for (it has not stored them yet). */
  const NOT_FOUND = -1;

  /**
   * A handle whose n-th batch answers the sequences from where it starts up to `answers[n]`, then ends (the end of the
   * batch) when it reached `END`, or else says nothing more until it is stopped (its replica died half-way).
   */
  const scriptedBatches = (answers: number[], leaderHas = END): { nats: NatsHandle; starts: number[]; leaderGets: number[]; warnings: string[] } => {
    const starts: number[] = [];
    const leaderGets: number[] = [];
    const warnings: string[] = [];
    // The stream leader's message-get API: the next message at or after `seq` (every sequence matches the filter here).
    const getMessage = async (_stream: string, query: { seq: number }) => {
      leaderGets.push(query.seq);
      return query.seq <= leaderHas ? message(query.seq) : null;
    };
    const logger = { warn: (_fields: unknown, text: string) => void warnings.push(text) };
    const getBatch = async (_stream: string, options: { seq: number; callback: (done: { err?: Error } | null, m: unknown) => void }) => {
      const upTo = answers[starts.length] ?? 0;
      starts.push(options.seq);
      if (upTo === NOT_FOUND) {
        options.callback({ err: new JetStreamStatusError('message not found', 404) }, {});
        return { stop: () => undefined };
      }
      for (let seq = options.seq; seq <= upTo; seq++) options.callback(null, message(seq));
      if (upTo >= END) options.callback({}, {});
      return { stop: () => options.callback({}, {}) };
    };
    return {
      nats: { serverVersion: '2.12.15', logger, jsm: { direct: { getBatch }, streams: { getMessage } } } as unknown as NatsHandle,
      starts,
      leaderGets,
      warnings,
    };
  };

  it('asks again when a replica that has not stored the range yet answers 404 message not found, instead of failing the read', async () => {
    const { nats, starts } = scriptedBatches([NOT_FOUND, END]);
    const read = rangeReaderFor(nats, 'EVENTS', SILENCE_MS);
    const commits = await read('events.>', 1, END, 100, (m) => ({ sequence: m.seq }) as never);
    expect(commits.map((c: { sequence: number }) => c.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(starts).toEqual([1, 1]);
  });

  it('asks again from the next sequence when a batch stops half-way (its replica died: the rest never comes)', async () => {
    const { nats, starts } = scriptedBatches([2, END]);
    const read = rangeReaderFor(nats, 'EVENTS', SILENCE_MS);
    const commits = await read('events.>', 1, END, 100, (m) => ({ sequence: m.seq }) as never);
    expect(commits.map((c: { sequence: number }) => c.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(starts).toEqual([1, 3]);
  });

  // One stream name per test: the warning is said once a minute per stream, for the whole process.
  const sequences = async (nats: NatsHandle, stream: string): Promise<number[]> =>
    (await rangeReaderFor(nats, stream, SILENCE_MS)('events.>', 1, END, 100, (m) => ({ sequence: m.seq }) as never)).map(
      (c: { sequence: number }) => c.sequence,
    );
  const STAYS_BEHIND = Array.from({ length: 200 }, () => NOT_FOUND);

  it('reads the rest from the stream leader when the replica answering stays behind (a restarted node catching up), and says so', async () => {
    const { nats, starts, leaderGets, warnings } = scriptedBatches([2, ...STAYS_BEHIND]);
    expect(await sequences(nats, 'BEHIND_ONCE')).toEqual([1, 2, 3, 4, 5]);
    // The replica was asked 1 + 51 times (about a second), then the leader once per missing message.
    expect(starts.length).toBe(52);
    expect(leaderGets).toEqual([3, 4, 5]);
    expect(warnings).toEqual(['a replica answering direct gets stays behind the stream; reads it cannot answer go to the stream leader']);
  });

  it('warns once a minute, not on every read that needs the leader', async () => {
    const { nats, warnings } = scriptedBatches(STAYS_BEHIND);
    expect(await sequences(nats, 'BEHIND_TWICE')).toEqual([1, 2, 3, 4, 5]);
    expect(await sequences(nats, 'BEHIND_TWICE')).toEqual([1, 2, 3, 4, 5]);
    expect(warnings).toHaveLength(1);
  });

  it('ends the read where the leader holds nothing more (purged meanwhile): a short read the caller judges', async () => {
    const { nats } = scriptedBatches(STAYS_BEHIND, 3);
    expect(await sequences(nats, 'PURGED')).toEqual([1, 2, 3]);
  });
});
