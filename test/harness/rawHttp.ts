import { connect } from 'node:net';

/**
 * Sends raw bytes to 127.0.0.1:port (what fetch and inject refuse to send: a header twice, a broken request line) and
 * returns all the answer's bytes once the server closes the connection, or what came within `waitMs`.
 */
export const rawHttp = async (port: number, bytes: string, waitMs = 2_000): Promise<string> => {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise((resolve) => socket.on('close', resolve));
  socket.write(bytes);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
  clearTimeout(timer);
  socket.destroy();
  return text;
};

/** The status line and the JSON body of a raw answer (`Connection: close`, no chunked encoding). */
export const rawAnswer = (text: string): { status: string; body: unknown } => ({
  status: text.split('\r\n')[0] ?? '',
  body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)),
});
