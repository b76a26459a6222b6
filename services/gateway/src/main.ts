import { mainLogger, runMain } from '@wagw/lib';
import { loadConfig } from './config';
import { startGateway } from './service';

const logger = mainLogger('gateway');
runMain(logger, () => startGateway(loadConfig(), logger));
