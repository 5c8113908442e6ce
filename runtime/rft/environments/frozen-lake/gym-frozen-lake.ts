/**
 * Gymnasium's `FrozenLake-v1` rules (gymnasium/envs/toy_text/frozen_lake.py @04b863d, toy_text/utils.py
 * `categorical_sample`), which Trinity's frozen_lake_workflow steps through:
 * - actions 0 left, 1 down, 2 right, 3 up; a move into the border leaves the player where it is (`inc`);
 * - from a G or H cell every action stays put with reward 0, terminated (the player never leaves them);
 * - otherwise a move lands on a cell: terminated when it is G or H, reward 1.0 on G else 0.0;
 * - slippery: the intended direction and the two perpendicular ones ((a − 1) mod 4, a, (a + 1) mod 4), 1/3 each;
 * - every step and `reset` draw one `np_random.random()` and take the first cumulative probability above it
 *   (`argmax(cumsum(p) > u)`), so the draws follow the env's seeded generator even when the lake is not slippery;
 * - `reset(seed)` reseeds that generator (`seeding.np_random(seed)`) and starts on the S cell.
 */
import { defaultRng, type NumpyGenerator } from '../../numpy/numpy-random';

export const GYM_LEFT = 0;
export const GYM_DOWN = 1;
export const GYM_RIGHT = 2;
export const GYM_UP = 3;

export interface Transition {
  prob: number;
  next: number;
  reward: number;
  terminated: boolean;
}

export interface GymStep {
  state: number;
  reward: number;
  terminated: boolean;
  prob: number;
}

export class GymFrozenLake {
  readonly nrow: number;
  readonly ncol: number;
  /** The board, one character per cell (S, F, H, G). */
  readonly desc: readonly string[];
  /** The player's cell, row × ncol + col. */
  s = 0;
  private rng: NumpyGenerator | undefined;

  constructor(
    desc: readonly string[],
    readonly isSlippery: boolean,
  ) {
    if (desc.length === 0 || desc.some((row) => row.length !== desc[0].length))
      throw new RangeError('a frozen lake map needs rows of equal length');
    const bad = desc.join('').match(/[^SFHG]/);
    if (bad) throw new RangeError(`a frozen lake map holds only S, F, H and G, not ${JSON.stringify(bad[0])}`);
    if (!desc.join('').includes('S')) throw new RangeError('a frozen lake map needs a start cell S');
    this.desc = [...desc];
    this.nrow = desc.length;
    this.ncol = desc[0].length;
  }

  letter(state: number): string {
    return this.desc[Math.floor(state / this.ncol)][state % this.ncol];
  }

  /** `P[s][a]`: the transitions of action `a` from cell `s`. */
  transitions(s: number, a: number): Transition[] {
    if (!Number.isInteger(a) || a < 0 || a > 3) throw new RangeError(`a FrozenLake action is 0-3, got ${a}`);
    if ('GH'.includes(this.letter(s))) return [{ prob: 1.0, next: s, reward: 0, terminated: true }];
    const dirs = this.isSlippery ? [(a + 3) % 4, a, (a + 1) % 4] : [a];
    const prob = this.isSlippery ? 1.0 / 3.0 : 1.0;
    return dirs.map((d) => {
      const next = this.move(s, d);
      const l = this.letter(next);
      return { prob, next, reward: l === 'G' ? 1.0 : 0.0, terminated: l === 'G' || l === 'H' };
    });
  }

  reset(seed: number): number {
    this.rng = defaultRng(seed);
    const starts = this.desc
      .join('')
      .split('')
      .map((c) => (c === 'S' ? 1 : 0));
    const total = starts.reduce((a: number, b) => a + b, 0);
    this.s = categoricalSample(
      starts.map((x) => x / total),
      this.rng,
    );
    return this.s;
  }

  step(a: number): GymStep {
    if (!this.rng) throw new Error('FrozenLake: reset before step');
    const ts = this.transitions(this.s, a);
    const t =
      ts[
        categoricalSample(
          ts.map((x) => x.prob),
          this.rng,
        )
      ];
    this.s = t.next;
    return { state: t.next, reward: t.reward, terminated: t.terminated, prob: t.prob };
  }

  private move(s: number, a: number): number {
    let row = Math.floor(s / this.ncol);
    let col = s % this.ncol;
    if (a === GYM_LEFT) col = Math.max(col - 1, 0);
    else if (a === GYM_DOWN) row = Math.min(row + 1, this.nrow - 1);
    else if (a === GYM_RIGHT) col = Math.min(col + 1, this.ncol - 1);
    else row = Math.max(row - 1, 0);
    return row * this.ncol + col;
  }
}

/** Gymnasium's `categorical_sample`: the first index whose cumulative probability exceeds one uniform draw. */
function categoricalSample(probs: readonly number[], rng: NumpyGenerator): number {
  const u = rng.random();
  let cum = 0;
  for (let i = 0; i < probs.length; i++) {
    cum += probs[i];
    if (cum > u) return i;
  }
  // np.argmax of an all-False array is 0.
  return 0;
}
