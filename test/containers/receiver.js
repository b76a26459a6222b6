// A webhook receiver for the container tests, run inside the compose network (test/containers/docker-compose.drill.yml)
// so that the webhooks service calls it there. Answers every POST with 200 and records it; GET /__received?from=N
// returns the records from index N on, in arrival order, for the test (through a port published on 127.0.0.1).
'use strict';
const http = require('node:http');

const received = [];
const server = http.createServer((request, response) => {
  const url = new URL(request.url, 'http://receiver');
  if (request.method === 'GET' && url.pathname === '/__received') {
    const from = Number(url.searchParams.get('from') ?? 0);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(received.slice(from)));
    return;
  }
  if (request.method === 'GET' && url.pathname === '/__healthz') {
    response.writeHead(200).end('ok');
    return;
  }
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    received.push({
      path: url.pathname,
      headers: {
        'webhook-id': request.headers['webhook-id'] ?? '',
        'webhook-timestamp': request.headers['webhook-timestamp'] ?? '',
        'webhook-signature': request.headers['webhook-signature'] ?? '',
      },
      body: Buffer.concat(chunks).toString('utf8'),
      at: Date.now(),
    });
    response.writeHead(200).end();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(8080, '0.0.0.0');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
