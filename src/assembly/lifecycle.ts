/**
 * Where the server is in its life: the post-start hooks /readyz reports (kube-apiserver's names),
 * whether it is ready, and whether it is shutting down.
 */
export class Lifecycle {
  readonly started = Date.now();
  ready = false;
  shuttingDown = false;
  readonly postStartHooks = new Map<string, boolean>([
    ['start-apiserver-admission-initializer', false],
    ['generic-apiserver-start-informers', false],
    ['bootstrap-controller', false],
    ['start-service-account-controller', false],
    ['start-namespace-controller', false],
  ]);

  /** a hook that must finish before the server is ready */
  expect(hook: string): void {
    this.postStartHooks.set(hook, false);
  }

  done(...hooks: string[]): void {
    for (const hook of hooks) this.postStartHooks.set(hook, true);
  }
}
