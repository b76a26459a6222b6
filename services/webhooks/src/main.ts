import { mainLogger, runMain } from '@wagw/lib';
import { loadConfig } from './config';
import { startWebhooksService } from './service';

const logger = mainLogger('webhooks');
runMain(logger, () => startWebhooksService(loadConfig(), logger));
