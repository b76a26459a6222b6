import { createLogger, runMain } from '@wagw/lib';
import { loadConfig } from './config';
import { startInstancesService } from './service';

const logger = createLogger('instances');
runMain(logger, () => startInstancesService(loadConfig(), logger));
