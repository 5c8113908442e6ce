/**
 * The workflow runners of an explorer step (Trinity's scheduler runs `engines × runner_per_model` of them): at most
 * `capacity` workflow runs go at once across the step's tasks, granted in the order they asked, so runs that ask
 * together start in task and run order.
 */
export class RunSlots {
  private free: number;
  private readonly waiting: { n: number; grant: () => void }[] = [];

  constructor(readonly capacity: number) {
    this.free = capacity;
  }

  /** Runs `fn` holding `n` slots (at most all of them: a workflow that must run alone takes every slot). */
  async with<T>(n: number, fn: () => T | Promise<T>): Promise<T> {
    const held = Math.min(n, this.capacity);
    await this.acquire(held);
    try {
      return await fn();
    } finally {
      this.free += held;
      while (this.waiting.length > 0 && this.free >= this.waiting[0].n) {
        const next = this.waiting.shift()!;
        this.free -= next.n;
        next.grant();
      }
    }
  }

  private acquire(n: number): Promise<void> {
    if (this.waiting.length === 0 && this.free >= n) {
      this.free -= n;
      return Promise.resolve();
    }
    return new Promise((grant) => this.waiting.push({ n, grant }));
  }
}
