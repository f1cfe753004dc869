/**
 * Synthetic TRL sources for the adapter-contract tests, written for polgrad: a `GRPOTrainer` whose
 * `_compute_loss` and `_get_per_token_logps_and_entropies` have the parameter lists and return
 * arities measured on the real TRL tags (docs/conformance/adapters.md#measured-facts), and a PAPO
 * trainer stand-in whose call sites unpack two values, as the v0.29.1 file does. No upstream code.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const BASE = [
  "self",
  "model",
  "input_ids",
  "attention_mask",
  "logits_to_keep",
  "batch_size",
  "compute_entropy",
];
const OLD_MM = [
  "pixel_values",
  "image_grid_thw",
  "num_images",
  "pixel_attention_mask",
  "image_sizes",
  "token_type_ids",
];

/** The measured `_get_per_token_logps_and_entropies` parameters and return arity per tag range. */
export const LOGPS_API: Readonly<
  Record<
    "v0.27.0" | "v0.29.0" | "v1.0.0" | "v1.1.0" | "v1.7.0",
    { params: readonly string[]; returns: number }
  >
> = {
  "v0.27.0": { params: [...BASE, ...OLD_MM], returns: 2 },
  "v0.29.0": { params: [...BASE, ...OLD_MM, "mm_token_type_ids"], returns: 2 },
  "v1.0.0": { params: [...BASE, ...OLD_MM, "mm_token_type_ids", "pixel_position_ids"], returns: 2 },
  "v1.1.0": { params: [...BASE, ...OLD_MM, "mm_token_type_ids", "image_position_ids"], returns: 2 },
  "v1.7.0": {
    params: [
      ...BASE,
      "compute_aux_loss",
      "pixel_values",
      "image_grid_thw",
      "num_images",
      "pixel_attention_mask",
      "spatial_shapes",
      "num_tiles",
      "image_sizes",
      "token_type_ids",
      "mm_token_type_ids",
      "image_position_ids",
    ],
    returns: 3,
  },
};

/** A synthetic grpo_trainer.py with the given log-prob parameters, return arity and loss signature. */
export function grpoSource(
  params: readonly string[],
  returns: number,
  lossParams: readonly string[] = ["self", "model", "inputs"],
): string {
  const p = params.map((n, i) => (i < 5 ? `        ${n},` : `        ${n}=None,`)).join("\n");
  const values = ["logps", "entropies", "aux_loss"].slice(0, returns).join(", ");
  return `"""Synthetic GRPO trainer for polgrad's adapter-contract tests."""


class GRPOTrainer:
    def _get_per_token_logps_and_entropies(
${p}
    ):
        logps = entropies = aux_loss = None
        if batch_size == 0:
            return ${values}

        def helper():
            return 1

        return ${values}

    def _compute_loss(${lossParams.join(", ")}):
        return 0.0
`;
}

/** A synthetic PAPO trainer (version `v` in a comment) whose call sites unpack two values. */
export function papoSource(v: string): string {
  return `"""Synthetic PAPO trainer (${v}) for polgrad's adapter-contract tests."""


class PAPOTrainer:
    def _compute_loss(self, model, inputs):
        per_token_logps, entropies = self._get_per_token_logps_and_entropies(
            model,
            inputs["input_ids"],
            inputs["attention_mask"],
            1,
            compute_entropy=True,
            pixel_values=inputs.get("pixel_values"),
            image_grid_thw=inputs.get("image_grid_thw"),
        )
        masked_logps, masked_entropies = self._get_per_token_logps_and_entropies(
            model, inputs["input_ids"], inputs["attention_mask"], 1, compute_entropy=True
        )
        return per_token_logps.mean() - masked_logps.mean()
`;
}

/** Paths of the two files in the TRL tree. */
export const GRPO_PATH: string = "trl/trainer/grpo_trainer.py";
export const PAPO_PATH: string = "trl/experimental/papo/papo_trainer.py";

/** Write files into a fresh directory (a checkout) and return it. */
export function writeTree(files: Readonly<Record<string, string>>, at?: string): string {
  const dir = at ?? mkdtempSync(join(tmpdir(), "polgrad-adapter-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    "git",
    [
      "-c",
      "user.name=polgrad",
      "-c",
      "user.email=tests@polgrad.invalid",
      "-c",
      "commit.gpgsign=false",
      "-c",
      "tag.gpgsign=false",
      ...args,
    ],
    { cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } },
  ).toString("utf8");
}

/** One commit of the synthetic history: the tag (or null for an untagged commit) and its files. */
export interface SyntheticCommit {
  readonly tag: string | null;
  readonly files: Readonly<Record<string, string | null>>;
  /** An annotated tag instead of a lightweight one. */
  readonly annotated?: boolean;
}

/** Build a repository commit by commit (a null file is deleted) and return its `.git` directory. */
export function buildRepo(commits: readonly SyntheticCommit[]): string {
  const dir = mkdtempSync(join(tmpdir(), "polgrad-adapter-git-"));
  git(dir, "init", "-q", "-b", "main");
  for (const [i, c] of commits.entries()) {
    for (const [path, text] of Object.entries(c.files)) {
      if (text === null) git(dir, "rm", "-q", "--ignore-unmatch", "--", path);
      else writeTree({ [path]: text }, dir);
    }
    writeTree({ "COMMIT.txt": `${i}\n` }, dir);
    git(dir, "add", "-A");
    git(dir, "commit", "-q", "-m", `commit ${i}`);
    if (c.tag !== null) git(dir, "tag", ...(c.annotated ? ["-a", "-m", c.tag] : []), c.tag);
  }
  return join(dir, ".git");
}

/** A bare mirror of a repository's `.git` directory. */
export function mirrorOf(gitDir: string): string {
  const to = join(mkdtempSync(join(tmpdir(), "polgrad-adapter-mirror-")), "repo.git");
  git(tmpdir(), "clone", "-q", "--mirror", gitDir, to);
  return to;
}
