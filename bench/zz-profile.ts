import { startBenchNats } from './common';
import { withGateway } from './http';
import autocannon from 'autocannon';

const main = async () => {
  const nats = await startBenchNats();
  const what = process.env.PROFILE_WHAT ?? 'send';
  try {
    await withGateway(
      nats,
      async (gateway) => {
        const base = gateway.base;
        const headers = gateway.headers;
        const id = ((await (await fetch(`${base}/create_instance`, { headers })).json()) as { instance_id: string }).instance_id;
        await fetch(`${base}/get_qrcode?instance_id=${id}`, { headers });
        await fetch(`${base}/sandbox/scan?instance_id=${id}&number=4915112345678`, { headers });
        await new Promise((r) => setTimeout(r, 1500));
        const opts =
          what === 'send'
            ? {
                url: `${base}/send`,
                method: 'POST' as const,
                headers: { ...headers, 'content-type': 'application/json' },
                body: JSON.stringify({
                  instance_id: id,
                  number: '4915199999999',
                  type: 'text',
                  message: 'hello from the gateway benchmark, a short message body',
                }),
              }
            : { url: `${base}/create_instance`, headers };
        const r = await autocannon({ connections: 50, duration: 10, ...opts });
        console.log(what, r.requests.average, r.non2xx, r.latency.p99);
      },
      JSON.parse(process.env.PROFILE_ENV ?? '{}'),
    );
  } finally {
    await nats.stop();
  }
};
void main();
