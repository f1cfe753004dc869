import { Aggregation } from "../../aggregate/aggregation.js";
import { RatioKind, SurrogateKind } from "../../losses/config.js";
import { type AlgorithmSpec, defineAlgorithm } from "../spec.js";

/**
 * GMPO: the geometric mean of the token ratios, each clipped in log space on the side of its
 * advantage's sign (e^±0.4), as the row's ratio of an unclipped policy gradient;
 * seq_mean_token_mean, group mean/std advantages, no KL.
 *
 * @derivation docs/derivations/variants.md#gmpo
 * @enforcedBy test/registry/newAlgorithms.test.ts > new registry algorithms > golden: gmpo ships the sign-aware log-space clip at 0.4 on the geometric-mean ratio
 * @see arXiv 2507.20673
 * @since 0.3.0
 */
export const gmpo: AlgorithmSpec = defineAlgorithm({
  name: "gmpo",
  loss: {
    ratio: RatioKind.SEQUENCE,
    surrogate: SurrogateKind.PG,
    clip: null,
    aggregation: Aggregation.SEQ_MEAN_TOKEN_MEAN,
    normLen: null,
    isCorrection: null,
    kl: null,
    ratioClamp: { level: "token", lower: -0.4, upper: 0.4, signAware: true },
    emptyRows: "count",
  },
  advantage: "grpo",
  advantageConfig: { center: true, scale: "std", eps: 1e-4, unbiased: true },
  klPlacement: "none",
  klReward: null,
  citation: {
    title: "Geometric-Mean Policy Optimization",
    arxiv: "2507.20673",
    url: "https://arxiv.org/abs/2507.20673",
    notes:
      "Objective: the geometric mean of the token-level importance-weighted rewards with token-level " +
      "clipping in log space before the mean; the clip range (e^−0.4, e^0.4) of Sec. 4. Code: " +
      "https://github.com/callsys/GMPO, which verl's geo_mean cites.",
  },
  notes:
    "Ratio: sequence, exp((1/L_b) Σ_t z*_t) with z*_t = sgn(A)·min(sgn(A)·z_t, sgn(A)·clamp(z_t, " +
    "−0.4, 0.4)) as verl's geo_mean computes it: min(z, 0.4) for A > 0, max(z, −0.4) for A < 0, and " +
    "0 for A = 0. Surrogate: −Ā_b·ρ_b, the plain policy gradient on that ratio (pg). " +
    "Aggregation: verl takes torch.mean over the rows (every row of the batch, global batch info " +
    "ignored): seq_mean_token_mean with empty rows counted. " +
    "Clip: the paper's 0.4; verl's geo_mean reads clip_ratio_low/high, whose defaults are 0.2, so a " +
    "verl run without overrides clips at e^±0.2. " +
    "Advantage: GRPO group normalisation; KL: none.",
});
