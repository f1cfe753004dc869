/**
 * A deterministic real-sized ragged batch (issue 35's sizes, B = 128 sequences of up to T = 1024
 * tokens by default), as typed arrays: row b has 1 + (389·b mod T) response tokens, advantage
 * ((b mod 7) − 3) / 3, log-probabilities on a saw-tooth in [−1.3, −0.3] and old ones a little
 * apart. Used where a test needs the shapes users bring (the report's page, the playground, the
 * terminal's width), and written to any format by the caller.
 */
export interface RealSizedBatch {
  readonly B: number;
  readonly T: number;
  readonly logprobs: Float64Array;
  readonly oldLogprobs: Float64Array;
  readonly advantages: Float64Array;
  readonly responseMask: Uint8Array;
}

export function realSizedBatch(B = 128, T = 1024): RealSizedBatch {
  const logprobs = new Float64Array(B * T);
  const oldLogprobs = new Float64Array(B * T);
  const responseMask = new Uint8Array(B * T);
  const advantages = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    const L = 1 + ((b * 389) % T);
    advantages[b] = ((b % 7) - 3) / 3;
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      logprobs[i] = -0.3 - 0.002 * ((b * 13 + t * 7) % 500);
      oldLogprobs[i] = (logprobs[i] as number) - 0.02 * Math.sin(i);
      responseMask[i] = t < L ? 1 : 0;
    }
  }
  return { B, T, logprobs, oldLogprobs, advantages, responseMask };
}

/** The batch as the library's inputs (row-major matrices). */
export function asInputs(r: RealSizedBatch): {
  logprobs: { rows: number; cols: number; data: Float64Array };
  oldLogprobs: { rows: number; cols: number; data: Float64Array };
  advantages: Float64Array;
  responseMask: { rows: number; cols: number; data: Uint8Array };
} {
  return {
    logprobs: { rows: r.B, cols: r.T, data: r.logprobs },
    oldLogprobs: { rows: r.B, cols: r.T, data: r.oldLogprobs },
    advantages: r.advantages,
    responseMask: { rows: r.B, cols: r.T, data: r.responseMask },
  };
}

/** One tensor for encodeSafetensors. */
interface Tensor {
  dtype: "F64" | "U8";
  shape: number[];
  data: Float64Array | Uint8Array;
}

/** The batch's safetensors tensors (F64, the mask U8), for encodeSafetensors. */
export function asSafetensors(r: RealSizedBatch): Record<string, Tensor> {
  return {
    logprobs: { dtype: "F64" as const, shape: [r.B, r.T], data: r.logprobs },
    old_logprobs: { dtype: "F64" as const, shape: [r.B, r.T], data: r.oldLogprobs },
    advantages: { dtype: "F64" as const, shape: [r.B], data: r.advantages },
    response_mask: { dtype: "U8" as const, shape: [r.B, r.T], data: r.responseMask },
  };
}
