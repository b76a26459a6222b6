import { createServer, type Server } from 'node:http';
import type { SandboxPlatform } from '../../services/sessions/src/connector/sandbox';
import { linkedSandboxInstance, sandboxOf } from '../harness/sandboxLink';
import { startStack, type TestStack } from '../harness/stack';
import { eventually } from '../harness/wait';

// README "send": `voice_note=true` sends a media send's audio as a voice note (a recorded voice message). Over HTTP
// with the sandbox connector: what the platform was handed, what the history says, and what is refused.

type HistoryEvent = { type: string; data: Record<string, unknown> };

describe('voice notes over HTTP with the sandbox connector', () => {
  let stack: TestStack;
  let media: Server;
  let mediaUrl: string;

  beforeAll(async () => {
    media = createServer((req, res) => {
      if (req.url === '/hello.ogg') return res.writeHead(200, { 'content-type': 'audio/ogg; codecs=opus' }).end(Buffer.alloc(3000, 9));
      if (req.url === '/cat.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(2048, 7));
      return res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    mediaUrl = `http://127.0.0.1:${(media.address() as { port: number }).port}`;
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
    media.closeAllConnections();
    await new Promise((resolve) => media.close(resolve));
  });

  const sandbox = (): SandboxPlatform => sandboxOf(stack);
  const history = async (id: string, messageId: string): Promise<HistoryEvent[]> =>
    (await stack.call(`/v1/history?instance_id=${id}&message_id=${messageId}`)).body.events as HistoryEvent[];
  const linked = (number: string): Promise<string> => linkedSandboxInstance(stack, number);
  const post = (body: Record<string, unknown>) => stack.call('/v1/send', { method: 'POST', body: JSON.stringify(body) });

  it('hands the platform the audio as a voice note, and the history says so', async () => {
    const id = await linked('4915100000301');
    const sent = await post({ instance_id: id, number: '4915199999999', type: 'media', media_url: `${mediaUrl}/hello.ogg`, voice_note: true });
    expect(sent.status).toBe(200);
    const messageId = sent.body.message_id as string;
    const events = await eventually(
      () => history(id, messageId),
      (h) => h.some((e) => e.type === 'MessageSent'),
      15_000,
    );
    expect(events[0]).toMatchObject({ type: 'MessageAccepted', data: { type: 'media', voice_note: true, text: null } });
    expect(
      sandbox()
        .sent(id)
        .map((m) => m.media),
    ).toEqual([{ mimetype: 'audio/ogg', filename: 'hello.ogg', size: 3000, caption: null, voiceNote: true }]);
  });

  it('fails a voice note whose file is not audio (MessageFailed media_not_audio), and sends nothing', async () => {
    const id = await linked('4915100000302');
    const sent = await stack.call(
      `/v1/send?instance_id=${id}&number=4915199999999&type=media&voice_note=true&media_url=${encodeURIComponent(`${mediaUrl}/cat.png`)}`,
    );
    expect(sent.status).toBe(200);
    const events = await eventually(
      () => history(id, sent.body.message_id as string),
      (h) => h.some((e) => e.type === 'MessageFailed'),
      15_000,
    );
    expect(events.find((e) => e.type === 'MessageFailed')?.data).toMatchObject({ reason: 'media_not_audio' });
    expect(sandbox().sent(id)).toEqual([]);
  });

  it.each([
    ['with type text', { type: 'text', message: 'hi', voice_note: true }, 'invalid_voice_note'],
    [
      'with a caption (WhatsApp shows none on audio)',
      { type: 'media', media_url: 'https://files.example/a.ogg', message: 'hi', voice_note: true },
      'invalid_voice_note',
    ],
    ['as a string in a JSON body', { type: 'media', media_url: 'https://files.example/a.ogg', voice_note: 'true' }, 'invalid_request'],
  ])('refuses a voice note %s: 400 %s', async (_case, fields, code) => {
    const id = await linked('4915100000303');
    const refused = await post({ instance_id: id, number: '4915199999999', ...fields });
    expect([refused.status, refused.body.code]).toEqual([400, code]);
  });

  it('reads voice_note=true and =false in the query form, and refuses another word', async () => {
    const id = await linked('4915100000304');
    const query = (value: string) =>
      stack.call(`/v1/send?instance_id=${id}&number=4915199999999&type=media&voice_note=${value}&media_url=${encodeURIComponent(`${mediaUrl}/hello.ogg`)}`);
    expect((await query('false')).status).toBe(200);
    const maybe = await query('maybe');
    expect([maybe.status, maybe.body.code]).toEqual([400, 'invalid_request']);
  });
});
