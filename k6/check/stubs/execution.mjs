// k6/execution (https://grafana.com/docs/k6/latest/javascript-api/k6-execution/)
import { state } from './state.mjs';

const exec = {
  get vu() {
    return { idInTest: state.exec.vu, idInInstance: state.exec.vu, iterationInInstance: state.exec.iteration, iterationInScenario: state.exec.iteration, tags: {}, metrics: { tags: {}, metadata: {} } };
  },
  get scenario() {
    return { name: state.exec.scenario, executor: 'stub', startTime: Date.now(), progress: 0, iterationInInstance: state.exec.iterationInTest, iterationInTest: state.exec.iterationInTest };
  },
  get instance() {
    return { iterationsInterrupted: 0, iterationsCompleted: 0, vusActive: 1, vusInitialized: 1, currentTestRunDuration: 0 };
  },
  test: {
    abort(reason) { throw new Error(`test.abort: ${reason}`); },
    fail(reason) { throw new Error(`test.fail: ${reason}`); },
    options: {},
  },
};

export default exec;
