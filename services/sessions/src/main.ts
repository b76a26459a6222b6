import { mainLogger, runMain } from '@wagw/lib';
import { loadConfig } from './config';
import { startSessionsService } from './service';

const logger = mainLogger('sessions');
runMain(logger, () => startSessionsService(loadConfig(), logger));
