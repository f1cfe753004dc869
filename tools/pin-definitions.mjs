#!/usr/bin/env node
/**
 * Regenerate the pins: src/conformance/pins.ts, the drift pins (per tracked file the SHA-256 of its
 * bytes, per tracked definition its line span and normalised-segment SHA-256), and
 * src/contracts/pins.ts, the signature contracts (per TRL tag the pinned methods' parameter lists
 * and return annotations, and the PAPO trainer's SHA-256). Only hashes, spans and signatures are
 * written, never upstream code. Both files are always rewritten.
 *
 * Usage (after `npm run build`; see docs/conformance/drift.md#how-the-pins-are-made):
 *   node tools/pin-definitions.mjs [--verl DIR | --verl-git GITDIR] [--openrlhf DIR | --openrlhf-git GITDIR]
 *                                  [--trl DIR | --trl-git GITDIR] [--contracts-git GITDIR] [--force]
 * DIR is a git work tree at the pinned commit (checked with `git rev-parse HEAD`; --force skips the
 * check and is required for a directory that is not a git work tree); GITDIR is a git directory (bare or not) the files are read from
 * with `git show <commit>:<path>`. Frameworks and contracts not given keep their current pins.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = fileURLToPath(new URL("../", import.meta.url));
const dist = join(root, "dist");
if (
  !existsSync(join(dist, "conformance", "drift.js")) ||
  !existsSync(join(dist, "contracts", "signature.js"))
) {
  console.error("pin-definitions: run `npm run build` first (the tool uses dist/)");
  process.exit(2);
}
const { recordPins } = await import(join(dist, "conformance", "drift.js"));
const { recordContract } = await import(join(dist, "contracts", "signature.js"));
const { DRIFT_PINS } = await import(join(dist, "conformance", "pins.js"));
const { CONTRACT_PINS } = await import(join(dist, "contracts", "pins.js"));

/** What is tracked for drift: edit here, then rerun the tool. */
const TRACKED = {
  verl: {
    framework: "verl",
    repo: "verl-project/verl",
    commit: "74a718a492092312f1004fe25369975137388849",
    files: [
      {
        path: "verl/trainer/ppo/core_algos.py",
        definitions: [
          "agg_loss",
          "compute_policy_loss",
          "compute_policy_loss_vanilla",
          "compute_policy_loss_gspo",
          "compute_policy_loss_cispo",
          "compute_value_loss",
          "kl_penalty",
          "kl_penalty_forward",
          "compute_grpo_outcome_advantage",
          "compute_rloo_outcome_advantage",
          "compute_reinforce_plus_plus_outcome_advantage",
        ],
      },
      {
        path: "verl/utils/torch_functional.py",
        definitions: ["clip_by_value", "masked_sum", "masked_mean", "masked_whiten"],
      },
    ],
  },
  openrlhf: {
    framework: "openrlhf",
    repo: "OpenRLHF/OpenRLHF",
    commit: "bc71bb19464aca306b33080b2d2bb45d154e2f49",
    files: [
      {
        path: "openrlhf/models/loss.py",
        definitions: ["aggregate_loss", "PolicyLoss", "ValueLoss"],
      },
      { path: "openrlhf/models/utils.py", definitions: ["compute_approx_kl", "masked_mean"] },
    ],
  },
  trl: {
    framework: "trl",
    repo: "huggingface/trl",
    commit: "95809b942eb5d11d0b06d749510d88be99230b73",
    files: [
      {
        path: "trl/trainer/grpo_trainer.py",
        definitions: [
          "GRPOTrainer._compute_loss",
          "GRPOTrainer._get_per_token_logps_and_entropies",
        ],
      },
    ],
  },
};

/** Signature contracts: TRL tags, the methods pinned at each, and files pinned by hash (when present). */
const CONTRACT_TAGS = [
  "v0.29.1",
  "v1.0.0rc1",
  "v1.0.0",
  "v1.1.0",
  "v1.2.0",
  "v1.3.0",
  "v1.4.0",
  "v1.5.0",
  "v1.5.1",
  "v1.6.0",
  "v1.7.0",
  "v1.7.1",
  "v1.8.0",
  "v1.9.0",
];
const CONTRACT_METHODS = [
  { name: "GRPOTrainer._compute_loss", path: "trl/trainer/grpo_trainer.py" },
  { name: "GRPOTrainer._get_per_token_logps_and_entropies", path: "trl/trainer/grpo_trainer.py" },
];
const CONTRACT_FILES = ["trl/experimental/papo/papo_trainer.py"];

const { values } = parseArgs({
  options: {
    verl: { type: "string" },
    "verl-git": { type: "string" },
    openrlhf: { type: "string" },
    "openrlhf-git": { type: "string" },
    trl: { type: "string" },
    "trl-git": { type: "string" },
    "contracts-git": { type: "string" },
    force: { type: "boolean" },
  },
});

const git = (gitDir, ...args) =>
  execFileSync("git", [`--git-dir=${gitDir}`, ...args], {
    maxBuffer: 1 << 28,
    stdio: ["ignore", "pipe", "ignore"],
  });
const scratch = mkdtempSync(join(tmpdir(), "polgrad-pins-"));

/** Materialise `paths` at `rev` of a git directory into a fresh work tree; absent paths are skipped. */
function exportTree(gitDir, rev, paths) {
  const dir = mkdtempSync(join(scratch, "tree-"));
  const present = [];
  for (const p of paths) {
    let bytes;
    try {
      bytes = git(gitDir, "show", `${rev}:${p}`);
    } catch {
      continue;
    }
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), bytes);
    present.push(p);
  }
  return { dir, present };
}

function checkHead(dir, commit) {
  if (values.force) return;
  let head;
  try {
    head = execFileSync("git", ["-C", dir, "rev-parse", "HEAD"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    console.error(
      `pin-definitions: ${dir} is not a git work tree, so its commit cannot be checked; pass --force to pin its files as ${commit.slice(0, 12)}`,
    );
    process.exit(2);
  }
  if (head !== commit) {
    console.error(
      `pin-definitions: ${dir} is at ${head}, not the pinned ${commit} (use --force to pin it anyway)`,
    );
    process.exit(2);
  }
}

const drift = { ...DRIFT_PINS };
for (const [fw, tracked] of Object.entries(TRACKED)) {
  let dir = values[fw];
  if (dir !== undefined) checkHead(dir, tracked.commit);
  else if (values[`${fw}-git`] !== undefined)
    dir = exportTree(
      values[`${fw}-git`],
      tracked.commit,
      tracked.files.map((f) => f.path),
    ).dir;
  else continue;
  drift[fw] = await recordPins(dir, tracked);
  console.error(`pinned ${fw} at ${tracked.commit.slice(0, 12)} from ${dir}`);
}

let contracts = { ...CONTRACT_PINS };
if (values["contracts-git"] !== undefined) {
  const gitDir = values["contracts-git"];
  contracts = {};
  for (const tag of CONTRACT_TAGS) {
    const commit = git(gitDir, "rev-parse", `${tag}^{commit}`).toString().trim();
    const paths = [...new Set([...CONTRACT_METHODS.map((m) => m.path), ...CONTRACT_FILES])];
    const { dir, present } = exportTree(gitDir, commit, paths);
    const name = `trl@${tag}`;
    const files = CONTRACT_FILES.filter((p) => present.includes(p));
    contracts[name] = await recordContract(dir, {
      name,
      repo: "huggingface/trl",
      tag,
      commit,
      methods: CONTRACT_METHODS,
      files,
    });
    console.error(
      `pinned contract ${name} (${commit.slice(0, 12)}), files: ${files.join(", ") || "none"}`,
    );
  }
}
rmSync(scratch, { recursive: true, force: true });

/** A TS object literal: objects of scalars on one line (biome reflows what is too long), the rest nested. */
function literal(v, indent = "") {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  const inner = `${indent}  `;
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    return `[\n${v.map((x) => `${inner}${literal(x, inner)},`).join("\n")}\n${indent}]`;
  }
  const entries = Object.entries(v);
  const key = (k) => (/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k));
  if (entries.every(([, x]) => x === null || typeof x !== "object"))
    return `{ ${entries.map(([k, x]) => `${key(k)}: ${JSON.stringify(x)}`).join(", ")} }`;
  return `{\n${entries.map(([k, x]) => `${inner}${key(k)}: ${literal(x, inner)},`).join("\n")}\n${indent}}`;
}

const driftFile = `/**
 * Drift pins: hashes and line spans. GENERATED by tools/pin-definitions.mjs from checkouts of the
 * frameworks at the pinned commits; do not edit by hand
 * (docs/conformance/drift.md#how-the-pins-are-made). No upstream code is stored here.
 */
import type { DriftFramework, DriftPins } from "./driftTypes.js";

/** Drift pins per framework: file SHA-256, and per tracked definition its span and segment SHA-256. */
export const DRIFT_PINS: Readonly<Record<DriftFramework, DriftPins>> = ${literal(drift)};
`;
const contractFile = `/**
 * Signature-contract pins: parameter lists, return annotations and file hashes per TRL tag.
 * GENERATED by tools/pin-definitions.mjs from checkouts of the framework at the pinned tags; do not
 * edit by hand (docs/conformance/drift.md#how-the-pins-are-made). No upstream code is stored here.
 */
import type { SignatureContract } from "./signatureTypes.js";

/** Signature contracts by name (\`trl@<tag>\`): pinned methods and file hashes per release. */
export const CONTRACT_PINS: Readonly<Record<string, SignatureContract>> = ${literal(contracts)};
`;
const outputs = [
  [join(root, "src", "conformance", "pins.ts"), driftFile],
  [join(root, "src", "contracts", "pins.ts"), contractFile],
];
for (const [out, text] of outputs) writeFileSync(out, text);
execFileSync(
  join(root, "node_modules", ".bin", "biome"),
  ["format", "--write", ...outputs.map(([out]) => out)],
  { stdio: "inherit" },
);
for (const [out] of outputs) console.error(`wrote ${out}`);
