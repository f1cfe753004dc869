/**
 * The text of `polgrad loss` for a framework model, a framework release's config and a PAPO loss,
 * and the line `--out` ends it with (pure: returns text, prints nothing). The policy-loss summary
 * is report/lossText.ts.
 */
import { safeText } from "../core/message.js";

/** A framework model's loss: the model, its pin, the batch and the loss. @internal */
export function renderFrameworkModelLossText(
  framework: {
    readonly id: string;
    readonly pin: {
      readonly repo: string;
      readonly commit: string;
      readonly path: string;
      readonly function: string;
    };
  },
  batchPath: string,
  loss: number,
): string {
  const { id, pin } = framework;
  return (
    `framework model ${id}\n  ${pin.repo} @ ${pin.commit} ${pin.path}::${pin.function}\n` +
    `batch ${batchPath}\nloss          ${loss}\n(use --json for the gradient and per-token fields at full precision)\n`
  );
}

/**
 * The loss of a framework config resolved against a release: the release, the config, what the
 * batch stands for, the loss, each micro-batch's loss and the resolution's warnings.
 * @internal
 */
export function renderFrameworkLossText(
  res: {
    readonly ref: string;
    readonly repo: string;
    readonly release: { readonly commit: string };
    readonly plan: { readonly batchMeaning: string };
    readonly warnings: readonly { readonly code: string; readonly message: string }[];
  },
  configName: string,
  batchPath: string,
  r: {
    readonly loss: number;
    readonly microBatches: readonly {
      readonly rows: readonly [number, number] | readonly number[];
      readonly loss: number;
    }[];
  },
): string {
  return (
    `${res.ref} (${res.repo} @ ${res.release.commit.slice(0, 12)}), config ${safeText(configName)}\n` +
    `batch ${batchPath}: ${res.plan.batchMeaning}\n` +
    `loss          ${r.loss}\n` +
    `micro-batches ${r.microBatches.map((m) => `[${m.rows[0]}, ${m.rows[1]}) ${m.loss}`).join("; ")}\n` +
    res.warnings.map((w) => `warning [${w.code}] ${w.message}\n`).join("") +
    "(use --json for the gradient and per-token fields at full precision; 'polgrad explain' for the resolution)\n"
  );
}

/**
 * A PAPO loss: its settings (γ, the clamp, η1, η2, the KL term and where β came from, the preset),
 * the loss and its three parts.
 * @internal
 */
export function renderPapoLossText(
  label: string,
  batchPath: string,
  p: {
    readonly perception_loss_weight: number;
    readonly perception_kl_clip: number | null;
    readonly der_loss_weight1: number | null;
    readonly der_loss_weight2: number | null;
    readonly beta: number | null;
    readonly preset: string | null;
  },
  kl: { readonly kind: string; readonly coef: number } | null,
  r: {
    readonly loss: number;
    readonly policyLoss: number;
    readonly perceptionTerm: number;
    readonly entropyTerm: number | null;
  },
): string {
  const settings =
    `γ ${p.perception_loss_weight}, clamp ${p.perception_kl_clip ?? "none"}, ` +
    `η1 ${p.der_loss_weight1 ?? "none"}, η2 ${p.der_loss_weight2 ?? "none"}, ` +
    `KL ${kl === null ? "none" : `${kl.kind} ${kl.coef}`}` +
    (p.beta === null ? " (the parent's)" : ` (β ${p.beta})`) +
    (p.preset === null ? "" : `; preset ${p.preset}`);
  return (
    `${label}, batch ${batchPath}\n` +
    `settings         ${settings}\n` +
    `loss             ${r.loss}\n` +
    `policy loss      ${r.policyLoss} (the parent's)\n` +
    `perception term  ${r.perceptionTerm} (subtracted)\n` +
    `entropy term     ${r.entropyTerm ?? "none"}\n` +
    "(use --json for the gradients w.r.t. logprobs and masked_logprobs at full precision)\n"
  );
}

/**
 * A loss text with `--out FILE.safetensors`: its closing `(use --json …)` hint replaced by the
 * tensors written and where. @internal
 */
export function renderTensorsWrittenText(
  text: string,
  tensors: readonly string[],
  path: string,
): string {
  return `${text.replace(/\(use --json[^)]*\)\n$/, "")}tensors ${tensors.join(", ")} written to ${safeText(path)}\n`;
}
