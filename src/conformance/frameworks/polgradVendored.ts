/**
 * polgrad 0.2.0's `VENDORED` registry as framework model ids: each `(framework, variant)` key of
 * polgrad's conformance harness, and the model here that computes what its callable computes
 * (docs/conformance/frameworks.md#polgrads-vendored-entries).
 */

/**
 * polgrad 0.2.0's `VENDORED` keys (`framework/variant`, as `deviation_report(framework, variant)`
 * takes them) → the framework model id computing the same loss. polgrad's verl and OpenRLHF
 * wrappers (its verl GSPO/CISPO reimplementations too) convert the bool mask to the logprobs'
 * float64 before calling the framework code, so their ids carry `[mask_dtype=float64]`: under it,
 * verl's and OpenRLHF's per-row divisor L_b + 1e-8 is not L_b. polgrad's TRL reimplementation
 * takes the bool mask as is (and no TRL normaliser adds an ε), so its ids carry none.
 *
 * @enforcedBy test/conformance/frameworks/polgradFixtures.test.ts > polgrad 0.2.0 framework fixtures > conformance: all 44 recorded cases replay through the cli to 1e-12
 * @since 0.1.0
 */
export const POLGRAD_VENDORED: Readonly<Record<string, string>> = Object.freeze({
  "verl/pg_clip_token_mean": "verl@74a718a4:vanilla:token-mean[mask_dtype=float64]",
  "verl/pg_clip_seq_mean_token_mean":
    "verl@74a718a4:vanilla:seq-mean-token-mean[mask_dtype=float64]",
  "verl/pg_clip_seq_mean_token_sum": "verl@74a718a4:vanilla:seq-mean-token-sum[mask_dtype=float64]",
  "verl/pg_clip_seq_mean_token_sum_norm":
    "verl@74a718a4:vanilla:seq-mean-token-sum-norm[mask_dtype=float64]",
  "verl/gspo": "verl@74a718a4:gspo[mask_dtype=float64]",
  "verl/cispo": "verl@74a718a4:cispo[mask_dtype=float64]",
  "openrlhf/pg_clip_token_mean": "openrlhf@bc71bb19:ppo:token[mask_dtype=float64]",
  "openrlhf/pg_clip_seq_mean_token_mean": "openrlhf@bc71bb19:ppo:sample[mask_dtype=float64]",
  "trl/grpo": "trl@v1.8.0:grpo:token",
  "trl/bnpo": "trl@v1.8.0:bnpo:token",
  "trl/dr_grpo": "trl@v1.8.0:dr_grpo:token",
});
