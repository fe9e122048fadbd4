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
  /** who waits for a hook (`finished`) */
  private readonly waiting = new Map<string, Array<() => void>>();

  /** a hook that must finish before the server is ready */
  expect(hook: string): void {
    this.postStartHooks.set(hook, false);
  }

  done(...hooks: string[]): void {
    for (const hook of hooks) {
      this.postStartHooks.set(hook, true);
      for (const resolve of this.waiting.get(hook) ?? []) resolve();
      this.waiting.delete(hook);
    }
  }

  /** Resolves once `hook` is done (at once for a hook nobody expects). */
  finished(hook: string): Promise<void> {
    if (this.postStartHooks.get(hook) !== false) return Promise.resolve();
    return new Promise((resolve) => { this.waiting.set(hook, [...(this.waiting.get(hook) ?? []), resolve]); });
  }
}

/**
 * kube-apiserver is not ready before its flow-control configuration objects exist: every response
 * names its FlowSchema's UID, and clients may read the objects at once.
 */
export const apfConfigProducerHook = 'priority-and-fairness-config-producer';
