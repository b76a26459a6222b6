import { JetStreamEventStore } from '../eventStore';
import { compareWithCheckpoint, INSTANCE_STATES_MODEL } from '../instance';
import { createLogger, logLevelFromEnv } from '../log';
import { CheckpointStore, connectNats } from '../nats';
import { natsSettingsFromEnv } from '../config';
import { NATS_PATIENCE_MS } from './patience';

/**
 * `npm run rebuild -- instance_states [--write]`: folds the read model from the beginning of the log up to the stored
 * checkpoint's position and says whether both are equal (exit 0) or not (exit 1, with the differing instances); a
 * checkpoint the services cannot restore (another model version, another log) is said to be so, and why (exit 3).
 * `--write` stores the rebuilt model as the checkpoint (a repair). Needs NATS_URL (and NATS_REPLICAS on a cluster).
 */
const MODELS = [INSTANCE_STATES_MODEL];
/** The stored checkpoint cannot be restored by the services (not a difference of content: exit 1 is that). */
const EXIT_UNUSABLE = 3;
const args = process.argv.slice(2);
const model = args.find((arg) => !arg.startsWith('--'));
const USAGE = `usage: npm run rebuild -- <read model> [--write]\nread models: ${MODELS.join(', ')}\n`;
// Every other word is --write: a mistyped one (`--wrte`) only compared, and the repair asked for was silently skipped.
const stray = args.find((arg) => arg !== model && arg !== '--write');
if (!model || !MODELS.includes(model) || stray !== undefined || args.filter((arg) => arg === '--write').length > 1) {
  process.stderr.write(stray === undefined ? USAGE : `${stray.startsWith('-') ? 'unknown option' : 'unexpected word'} ${JSON.stringify(stray)}\n${USAGE}`);
  process.exit(2);
}

const main = async (): Promise<number> => {
  const logger = createLogger('rebuild', logLevelFromEnv(process.env, 'warn'));
  const settings = natsSettingsFromEnv(process.env);
  // A wrong NATS_URL fails after a few seconds with one line, instead of retrying for ever as a service would.
  const nats = await connectNats({ url: settings.natsUrl, name: 'rebuild', logger, replicas: settings.natsReplicas, giveUpAfterMs: NATS_PATIENCE_MS });
  try {
    const store = await JetStreamEventStore.open(nats, { logger });
    const checkpoints = await CheckpointStore.open(nats);
    const started = Date.now();
    const report = await compareWithCheckpoint(store, checkpoints, logger);
    const took = `${((Date.now() - started) / 1000).toFixed(2)} s`;
    if (report.position === null) {
      process.stdout.write(`${model}: no checkpoint stored yet; rebuilt ${report.instances} instances up to ${report.rebuilt.position} in ${took}\n`);
    } else if (report.unusable !== null) {
      process.stdout.write(
        `${model}: the checkpoint at position ${report.position} cannot be used: ${report.unusable}. The services fold the log from the beginning at their next start (and write a new one); --write replaces it with the rebuild now (${report.instances} instances up to ${report.rebuilt.position}, ${took})\n`,
      );
    } else if (report.equal) {
      process.stdout.write(`${model}: the rebuild equals the checkpoint at position ${report.position} (${report.instances} instances, ${took})\n`);
    } else {
      process.stdout.write(`${model}: the rebuild DIFFERS from the checkpoint at position ${report.position}; instances: ${report.differing.join(', ')}\n`);
    }
    if (args.includes('--write')) {
      await checkpoints.replace(report.rebuilt);
      process.stdout.write(`${model}: the rebuilt model is now the checkpoint (position ${report.rebuilt.position})\n`);
      return 0;
    }
    if (report.unusable !== null) return EXIT_UNUSABLE;
    return report.position === null || report.equal ? 0 : 1;
  } finally {
    await nats.close();
  }
};

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
