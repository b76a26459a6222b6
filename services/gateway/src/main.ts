import { createLogger, runMain } from '@wagw/lib';
import { loadConfig } from './config';
import { startGateway } from './service';

const logger = createLogger('gateway');
runMain(logger, () => startGateway(loadConfig(), logger));
