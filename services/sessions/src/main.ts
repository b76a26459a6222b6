import { createLogger, runMain } from '@wagw/lib';
import { loadConfig } from './config';
import { startSessionsService } from './service';

const logger = createLogger('sessions');
runMain(logger, () => startSessionsService(loadConfig(), logger));
