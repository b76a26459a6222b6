import { writeFileSync } from 'node:fs';
import { createLogger, createTokenVerifier } from '@wagw/lib';
import { buildGateway } from '../app';
import { noRevocations } from '../auth/revocations';
import { createInstancesClient } from '../instancesClient';
import { createSessionsClient } from '../sessionsClient';
import { createWebhooksClient } from '../webhooksClient';

/**
 * `node services/gateway/dist/cli/openapi.js FILE`: writes the OpenAPI document the gateway serves at
 * /v1/openapi.json (sandbox routes included) without any service running: gRPC clients connect on first call only.
 * The build feeds it to the lint (redocly) and to the generated client (clients/api).
 */
const main = async (file: string): Promise<void> => {
  const unused = '127.0.0.1:1';
  const clients = { instances: createInstancesClient(unused), webhooks: createWebhooksClient(unused), sessions: createSessionsClient(unused) };
  const app = await buildGateway({
    ...clients,
    sandbox: true,
    verifyToken: createTokenVerifier('x'.repeat(32)),
    revocations: noRevocations,
    logger: createLogger('openapi', 'warn'),
  });
  await app.ready();
  writeFileSync(file, `${JSON.stringify(app.swagger(), null, 2)}\n`);
  await app.close();
  Object.values(clients).forEach((client) => client.close());
};

const [file] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node services/gateway/dist/cli/openapi.js FILE\n');
  process.exit(2);
}
main(file).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
