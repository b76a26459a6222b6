import createClient, { type Client } from 'openapi-fetch';
import type { operations, paths } from './generated/schema';

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

type MediaQuery = operations['getMedia']['parameters']['query'];
type ExportQuery = operations['exportHistory']['parameters']['query'];

/**
 * `GET /media`: a received file, as a Blob (its `type` is the file's Content-Type). openapi-fetch parses a success as
 * JSON unless told otherwise, which fails on a file; `error` is the `{ error, code }` body as for any call.
 */
export const getMedia = (client: GatewayClient, query: MediaQuery) => client.GET('/media', { params: { query }, parseAs: 'blob' });

/**
 * `GET /history/export`: the NDJSON text (one event per line, then the `{"next_cursor"}` or `{"error", "code",
 * "next_cursor"}` line). It is not one JSON value, so it is read as text; for a very long history call
 * `client.GET('/history/export', { params: { query }, parseAs: 'stream' })` and read the lines as they come.
 */
export const exportHistory = (client: GatewayClient, query: ExportQuery) => client.GET('/history/export', { params: { query }, parseAs: 'text' });
