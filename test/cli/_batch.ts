/**
 * The CLI tests' 2×3 JSON batch in polgrad's snake_case wire names. Row 1 is padding after its
 * first token, and that padding holds junk (NaN, Infinity, 123) that must never reach an output.
 */
export const CLI_BATCH = {
  logprobs: [
    [-0.2, -1.0, -0.7],
    [-0.5, "NaN", 123],
  ],
  old_logprobs: [
    [-0.5, -0.7, -0.9],
    [-0.6, "Infinity", 123],
  ],
  ref_logprobs: [
    [-0.4, -1.1, -0.6],
    [-0.3, 0, 0],
  ],
  advantages: [1.5, -0.8],
  response_mask: [
    [true, true, true],
    [true, false, false],
  ],
} as const;
