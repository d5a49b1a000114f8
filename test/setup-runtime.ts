/**
 * Tests exercise failures on purpose (failed phases, nondeterministic replays); the SDK would log each of them.
 * Only errors reach the test output.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';

Runtime.install({
  logger: new DefaultLogger('ERROR'),
  telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
});
