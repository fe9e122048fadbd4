// What the stubs share: a fake API server (ServiceAccounts and Namespaces in memory), and what
// the script did (checks, metrics, requests), for k6/check.mjs to inspect.
export const state = {
  checks: [],
  metrics: new Map(),
  requests: [],
  wsSessions: 0,
  objects: new Map(), // collection path -> Map(name -> object)
  namespaces: new Set(['default']),
  revision: 100,
  exec: { vu: 1, iteration: 0, scenario: 'default', iterationInTest: 0 },
  reset() {
    this.checks = [];
    this.metrics = new Map();
    this.requests = [];
    this.wsSessions = 0;
  },
};
