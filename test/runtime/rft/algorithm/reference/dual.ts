/**
 * Forward-mode automatic differentiation in float64 for the policy-loss and KL-loss references: a value carries its
 * derivatives with respect to every seeded input at once (one pass gives the whole gradient). Where an operation has
 * a kink, the derivative is the one PyTorch's autograd takes there (tools/autograd/derivatives.yaml), so the
 * reference's gradients are Trinity's under `loss.backward()`. Nothing here comes from runtime/.
 */
import { sum } from './float64';

export class Dual {
  /** `d` is undefined for a constant (every derivative 0). */
  constructor(
    readonly v: number,
    readonly d?: Float64Array,
  ) {}
}

type Operand = Dual | number;

const lift = (x: Operand): Dual => (typeof x === 'number' ? new Dual(x) : x);

/** ka·da + kb·db, undefined when neither side has derivatives. */
function combine(a: Dual, ka: number, b?: Dual, kb = 0): Float64Array | undefined {
  if (!a.d && !b?.d) return undefined;
  const n = (a.d ?? b!.d!).length;
  const out = new Float64Array(n);
  if (a.d && ka !== 0) for (let i = 0; i < n; i++) out[i] += ka * a.d[i];
  if (b?.d && kb !== 0) for (let i = 0; i < n; i++) out[i] += kb * b.d[i];
  return out;
}

/** A [B][T] input whose derivatives are taken: element (i, t) is input number i·T + t. */
export function seed(values: readonly (readonly number[])[]): Dual[][] {
  const n = values.reduce((k, row) => k + row.length, 0);
  let k = 0;
  return values.map((row) =>
    row.map((v) => {
      const d = new Float64Array(n);
      d[k++] = 1;
      return new Dual(v, d);
    }),
  );
}

/** A [B][T] input without derivatives. */
export const constant = (values: readonly (readonly number[])[]): Dual[][] => values.map((row) => row.map(lift));

/** The gradient of a scalar with respect to a seeded [B][T] input of that shape. */
export function gradientOf(x: Dual, shape: readonly (readonly number[])[]): number[][] {
  let k = 0;
  return shape.map((row) => row.map(() => x.d?.[k++] ?? 0));
}

export function add(a: Operand, b: Operand): Dual {
  const [x, y] = [lift(a), lift(b)];
  return new Dual(x.v + y.v, combine(x, 1, y, 1));
}

export function sub(a: Operand, b: Operand): Dual {
  const [x, y] = [lift(a), lift(b)];
  return new Dual(x.v - y.v, combine(x, 1, y, -1));
}

export function mul(a: Operand, b: Operand): Dual {
  const [x, y] = [lift(a), lift(b)];
  return new Dual(x.v * y.v, combine(x, y.v, y, x.v));
}

export function div(a: Operand, b: Operand): Dual {
  const [x, y] = [lift(a), lift(b)];
  return new Dual(x.v / y.v, combine(x, 1 / y.v, y, -x.v / (y.v * y.v)));
}

export const neg = (a: Operand): Dual => mul(a, -1);

export function exp(a: Operand): Dual {
  const x = lift(a);
  const e = Math.exp(x.v);
  return new Dual(e, combine(x, e));
}

export function square(a: Operand): Dual {
  const x = lift(a);
  return new Dual(x.v * x.v, combine(x, 2 * x.v));
}

/** `torch.abs`: derivative sgn(x), 0 at 0. */
export function abs(a: Operand): Dual {
  const x = lift(a);
  return new Dual(Math.abs(x.v), combine(x, Math.sign(x.v)));
}

/** `torch.sigmoid`. */
export function sigmoid(a: Operand): Dual {
  const x = lift(a);
  const s = 1 / (1 + Math.exp(-x.v));
  return new Dual(s, combine(x, s * (1 - s)));
}

/** `F.logsigmoid`: min(x, 0) − log1p(e^−|x|), derivative σ(−x). */
export function logSigmoid(a: Operand): Dual {
  const x = lift(a);
  return new Dual(Math.min(x.v, 0) - Math.log1p(Math.exp(-Math.abs(x.v))), combine(x, 1 / (1 + Math.exp(x.v))));
}

/** `torch.clamp`: the derivative passes where lo ≤ x ≤ hi (bounds included), else 0. */
export function clamp(a: Operand, lo = -Infinity, hi = Infinity): Dual {
  const x = lift(a);
  return new Dual(Math.min(Math.max(x.v, lo), hi), combine(x, x.v >= lo && x.v <= hi ? 1 : 0));
}

/** `torch.maximum` / binary `torch.max`: the larger side's derivative; on a tie each side gets half. */
export function maximum(a: Operand, b: Operand): Dual {
  const [x, y] = [lift(a), lift(b)];
  if (x.v === y.v) return new Dual(x.v, combine(x, 0.5, y, 0.5));
  return x.v > y.v ? new Dual(x.v, combine(x, 1)) : new Dual(y.v, combine(y, 1));
}

/** `torch.minimum` / binary `torch.min`: the smaller side's derivative; on a tie each side gets half. */
export function minimum(a: Operand, b: Operand): Dual {
  const [x, y] = [lift(a), lift(b)];
  if (x.v === y.v) return new Dual(x.v, combine(x, 0.5, y, 0.5));
  return x.v < y.v ? new Dual(x.v, combine(x, 1)) : new Dual(y.v, combine(y, 1));
}

/** `torch.where(cond, a, b)`: the chosen side, with its derivative. */
export const where = (cond: boolean, a: Operand, b: Operand): Dual => lift(cond ? a : b);

/** `.detach()`. */
export const detach = (a: Operand): Dual => new Dual(lift(a).v);

/** `torch.sum`: values in PyTorch's order (float64.ts), derivatives summed alongside. */
export function total(xs: readonly Operand[]): Dual {
  const ds = xs.map(lift);
  const withD = ds.filter((x) => x.d);
  let d: Float64Array | undefined;
  if (withD.length) {
    d = new Float64Array(withD[0].d!.length);
    for (const x of withD) for (let i = 0; i < d.length; i++) d[i] += x.d![i];
  }
  return new Dual(sum(ds.map((x) => x.v)), d);
}

/** `torch.mean` over a list. */
export const average = (xs: readonly Operand[]): Dual => div(total(xs), xs.length);

/** Elementwise map over [B][T]. */
export const map2 = <T, U>(xs: readonly (readonly T[])[], f: (x: T, i: number, t: number) => U): U[][] =>
  xs.map((row, i) => row.map((x, t) => f(x, i, t)));
