import { request as httpRequest, type IncomingMessage } from 'node:http';
import {
  connectNats,
  ContentKeys,
  JetStreamEventStore,
  KvKeyBucket,
  messageEvent,
  messageStream,
  SealedEventStore,
  type MessageAccepted,
  type NatsHandle,
} from '@wagw/lib';
import { startStack, type TestStack } from '../harness/stack';
import { testLogger } from '../harness/logger';

/** ~20 MB of sealed text: some 20 export pages (a page ends at about 1 MiB). */
const MESSAGES = 5_000;
const TEXT = 's'.repeat(4_000);
const MiB = 1024 * 1024;
/** What the reader takes before the erasure, as in the report: a little of the export. */
const READ_FIRST = 200 * 1024;
/**
 * How far past what the reader had taken plaintext may still come: the page in the gateway's socket and the one the
 * instances service read next (each ~1 MiB), plus what the loopback's socket buffers took of the reply (Node cannot
 * shrink them; measured ~5 MB here, within Linux's default 4 MiB send buffer cap and the receiver's window). Before
 * the fix every byte of the rest (~20 MB) was plaintext: the gRPC streams and the HTTP reply buffered up to 16 pages
 * each ahead of the reader. The gRPC part alone is bounded exactly in lib/src/grpc/serverStream.test.ts.
 */
const PLAINTEXT_AHEAD = 8 * MiB;

/**
 * An export read slowly is held back page by page (gRPC and HTTP alike): content erased while it waits comes out
 * erased once the pages already on their way are through, instead of the whole rest having been read ahead in clear.
 */
describe('history export read slowly across an erasure', () => {
  let stack: TestStack;
  let nats: NatsHandle;
  let id: string;

  beforeAll(async () => {
    stack = await startStack();
    id = (await stack.call('/v1/create_instance')).body.instance_id as string;
    // Written straight to the event store, sealed with the instance's data key as the sessions service would: 5,000
    // sends through the API would take far longer than the point of the test.
    nats = await connectNats({ url: stack.nats.url, name: 'export-erasure-test', logger: testLogger('export-erasure-test') });
    const store = new SealedEventStore(await JetStreamEventStore.open(nats), new ContentKeys(await KvKeyBucket.open(nats)));
    const now = new Date().toISOString();
    for (let i = 0; i < MESSAGES; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, j) => {
          const messageId = `m_${(i + j).toString(16).padStart(24, '0')}`;
          const accepted = messageEvent<MessageAccepted>('MessageAccepted', now, {
            message_id: messageId,
            to: '4917600000777',
            type: 'text',
            text: TEXT,
            media_url: null,
            filename: null,
          });
          return store.append(messageStream(id, messageId), [accepted], { expectedVersion: 'any', commandId: `accept-${messageId}` });
        }),
      );
    }
  }, 60_000);

  afterAll(async () => {
    await nats.close();
    await stack.close();
  });

  /** Opens the export; resolves with the response once its headers came. */
  const openExport = (): Promise<IncomingMessage> =>
    new Promise((resolve, reject) => {
      const url = new URL(`${stack.baseUrl}/v1/history/export?instance_id=${id}`);
      const req = httpRequest(url, { headers: { authorization: `Bearer ${stack.token()}` } }, resolve);
      req.once('error', reject);
      req.end();
    });

  it('hands out the content erased once about a page past what the reader had taken when the erasure came', async () => {
    const response = await openExport();
    expect(response.statusCode).toBe(200);
    const chunks: Buffer[] = [];
    let taken = 0;
    // Read a little, then stop reading: the rest waits in the pipeline (or, before the fix, ahead of it in clear).
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        chunks.push(chunk);
        taken += chunk.length;
        if (taken < READ_FIRST) return;
        response.pause();
        response.off('data', onData);
        resolve();
      };
      response.on('data', onData);
      response.once('error', reject);
    });
    // Give every stage time to fill what it buffers ahead of the reader.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await stack.call(`/v1/erase_instance_data?instance_id=${id}`)).status).toBe(200);

    const rest = await new Promise<Buffer>((resolve, reject) => {
      const more: Buffer[] = [];
      response.on('data', (chunk: Buffer) => more.push(chunk));
      response.once('end', () => resolve(Buffer.concat(more)));
      response.once('error', reject);
      response.resume();
    });
    const head = Buffer.concat(chunks);
    const lines = Buffer.concat([head, rest]).toString('utf8').trim().split('\n');
    expect(JSON.parse(lines.at(-1)!)).toEqual({ next_cursor: null });

    // Where (in bytes of the whole export) the last line with its text in clear ends, and that none comes after an
    // erased one (the rest is read anew once the erasure is seen, never in clear again).
    let offset = 0;
    let lastPlain = 0;
    let plain = 0;
    let erased = 0;
    let plainAfterErased = false;
    for (const line of lines.slice(0, -1)) {
      offset += Buffer.byteLength(line) + 1;
      const event = JSON.parse(line) as { type: string; data: { text?: string | null; erased?: boolean } };
      if (event.type !== 'MessageAccepted') continue;
      if (event.data.text === TEXT) {
        plain++;
        lastPlain = offset;
        plainAfterErased ||= erased > 0;
      } else if (event.data.text === null && event.data.erased === true) erased++;
    }
    expect({ plain: plain + erased, plainAfterErased }).toEqual({ plain: MESSAGES, plainAfterErased: false });
    expect(Math.max(0, lastPlain - taken)).toBeLessThanOrEqual(PLAINTEXT_AHEAD);
  }, 30_000);
});
