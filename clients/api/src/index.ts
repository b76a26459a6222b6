import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/schema';

export type { components, operations, paths } from './generated/schema';

export interface GatewayClientOptions {
  /** The gateway's origin, e.g. `http://127.0.0.1:3000` (the client adds `/v1`). */
  baseUrl: string;
  /** A JWT, sent as `Authorization: Bearer`; omit for calls without a credential. */
  token?: string;
}

/** A typed client of the gateway's /v1 API: paths, parameters, bodies and answers come from its OpenAPI document. */
export type GatewayClient = Client<paths>;

export const createGatewayClient = ({ baseUrl, token }: GatewayClientOptions): GatewayClient =>
  createClient<paths>({ baseUrl: `${baseUrl.replace(/\/$/, '')}/v1`, headers: token ? { authorization: `Bearer ${token}` } : {} });
