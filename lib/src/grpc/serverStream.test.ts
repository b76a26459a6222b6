import { Client, credentials, type ServiceDefinition } from '@grpc/grpc-js';
import pino from 'pino';
import { startGrpcServer, type GrpcServer } from './server';
import { serverStreamHandler } from './serverStream';
import { callServerStream } from './stream';

const logger = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const same = (value: Buffer): Buffer => value;

/** A server-streaming method whose frames are raw bytes (no proto needed to count them). */
const PATH = '/test.Frames/Stream';
const definition: ServiceDefinition = {
  Stream: {
    path: PATH,
    requestStream: false,
    responseStream: true,
    requestSerialize: same,
    requestDeserialize: same,
    responseSerialize: same,
    responseDeserialize: same,
    originalName: 'stream',
  },
};

/** Frames of an export's page size: far past HTTP/2's 64 KiB window, so flow control is what holds them back. */
const FRAME = Buffer.alloc(1024 * 1024, 'x');
const FRAMES = 40;

/**
 * A slow reader holds the source back to about one frame ahead of what it took. Before, grpc-js's object streams
 * buffered 16 frames on each side, so a source that decrypts (an export) read 30-odd pages past the reader: content
 * an erasure meanwhile could no longer hide.
 */
describe('serverStreamHandler (a frame at a time) with callServerStream (readAhead 0)', () => {
  let server: GrpcServer;
  let client: Client;
  let read = 0;
  let closed = 0;

  beforeAll(async () => {
    const frames = function* (): Generator<Buffer> {
      for (let i = 0; i < FRAMES; i++) {
        read++;
        yield FRAME;
      }
    };
    const handler = serverStreamHandler<Buffer, Buffer>(logger, 'Stream', async () => ({ frames: frames(), close: async () => void closed++ }), {
      frameAtATime: true,
    });
    server = await startGrpcServer(definition, { Stream: handler }, '127.0.0.1:0', logger);
    client = new Client(`127.0.0.1:${server.port}`, credentials.createInsecure());
  });

  afterAll(async () => {
    client.close();
    await server.close();
  });

  it('reads the source at most about one frame ahead of the reader, and the whole of it for a reader that reads', async () => {
    const method = (request: Buffer) => client.makeServerStreamRequest<Buffer, Buffer>(PATH, same, same, request, {});
    const items = callServerStream(method, Buffer.alloc(0), { readAhead: 0 });
    const taken: number[] = [];
    for (let i = 0; i < 3; i++) {
      expect((await items.next()).value).toHaveLength(FRAME.length);
      // The reader stops: whatever runs ahead of it does so now.
      await sleep(300);
      taken.push(read - (i + 1));
    }
    // Frames read but not yet taken: the one on its way (in the HTTP/2 window) and the next (waiting to be written).
    expect(Math.max(...taken)).toBeLessThanOrEqual(2);
    let rest = 0;
    for await (const frame of items) rest += frame.length > 0 ? 1 : 0;
    expect([rest, read, closed]).toEqual([FRAMES - 3, FRAMES, 1]);
  });
});
