/**
 * How long a command-line tool waits for NATS (and its JetStream) to answer before it says so and exits: long
 * enough for a server that is just starting, short enough that a wrong NATS_URL is an error, not a hang.
 */
export const NATS_PATIENCE_MS = 5_000;
