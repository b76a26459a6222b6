import { mainLogger, runMain } from '@wagw/lib';
import { loadConfig } from './config';
import { startInstancesService } from './service';

const logger = mainLogger('instances');
runMain(logger, () => startInstancesService(loadConfig(), logger));
