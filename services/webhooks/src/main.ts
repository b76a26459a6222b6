import { createLogger, runMain } from '@wagw/lib';
import { loadConfig } from './config';
import { startWebhooksService } from './service';

const logger = createLogger('webhooks');
runMain(logger, () => startWebhooksService(loadConfig(), logger));
