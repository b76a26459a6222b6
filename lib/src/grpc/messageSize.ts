/**
 * The largest gRPC message our servers and channels take or send: grpc-js's default receive limit (4 MiB), set on
 * both sides (server.ts, channel.ts) from here, so that what is built to fit it (the Call stream's frames,
 * callFrames.ts; the history's pages and export chunks) refers to this one number. A message past it fails its call:
 * on a stream, the whole stream with every call it carries.
 */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * The bytes a page of a list (history, webhook deliveries) or an export chunk holds before it ends, whatever its
 * `limit`: it travels as one message, and 1,000 items of a few KB each pass MAX_MESSAGE_BYTES. A quarter of it leaves
 * room for the one item a page may hold past it (it goes alone: an event commit is 1 MB at most by default).
 */
export const MAX_PAGE_BYTES = MAX_MESSAGE_BYTES / 4;

/** The grpc-js options (channel and server) that hold every message to MAX_MESSAGE_BYTES. */
export const messageSizeOptions = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
} as const;
