import { resolve } from 'node:path';
import { loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { ProtoGrpcType as InstancesProto } from '../generated/instances';
import type { ProtoGrpcType as WebhooksProto } from '../generated/webhooks';
import type { ProtoGrpcType as SessionsProto } from '../generated/sessions';

/** The repository's `proto/` folder (same depth from `src/grpc` and `dist/grpc`). */
export const PROTO_DIR = resolve(__dirname, '../../../proto');

/** Options that match the type generator's flags in `scripts/gen-proto.sh` (imports such as call.proto resolve in PROTO_DIR). */
const LOADER_OPTIONS = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [PROTO_DIR] };

const load = <T>(file: string): T => loadPackageDefinition(loadSync(file, LOADER_OPTIONS)) as unknown as T;

export const loadInstancesProto = (): InstancesProto['wagw']['instances']['v1'] => load<InstancesProto>('instances.proto').wagw.instances.v1;

export const loadWebhooksProto = (): WebhooksProto['wagw']['webhooks']['v1'] => load<WebhooksProto>('webhooks.proto').wagw.webhooks.v1;

export const loadSessionsProto = (): SessionsProto['wagw']['sessions']['v1'] => load<SessionsProto>('sessions.proto').wagw.sessions.v1;
