/**
 * What Trinity's KL penalty (`apply_kl_penalty_to_reward`, kl_coef 0.1) gives on helpers.ts' batch (logprob = OLD,
 * ref = REF) and SCORES, float64, written out literally. reference/kl.ts regenerates them from Trinity's formulas
 * (reference-numbers.test.ts holds the two equal); kl.test.ts holds the implementation to them.
 */

/** Token-level scores whose outcome reward sits on each row's last response token. */
export const SCORES = [
  [0, 0, 1.0, 0],
  [0, 0, 0, 0.5],
  [0, 2.0, 0, 0],
];

/** The `kl` metric (mean over rows of each row's masked mean) per estimator. */
export const KL_PENALTY_METRIC: Record<string, number> = {
  k2: 0.10652777749317131,
  k3: 0.16098512104421767,
  low_var_kl: 0.16098512104421772,
  abs: 0.30277777683101853,
};

/** k3's penalised rewards: SCORES − 0.1·k3·mask. */
export const K3_PENALTY_REWARDS = [
  [-0.002140275816016979, -0.001873075307798189, 0.9959181779318282, 0],
  [-0.00048374180359596065, -0.00048374180359596065, -0.16551999668446754, 0.48934693402873664],
  [-0.0021402758160169845, 1.999516258196404, 0, 0],
];

/** k2's adaptive coefficient after one step (kl_coef 0.1, target_kl 0.1, horizon 100, 3 rows). */
export const K2_ADAPTIVE_COEF = 0.10019583332479515;
