/**
 * The upstream files the framework models were read from: repository, full commit, label and the
 * SHA-256 of each file's bytes at that commit (`git show <commit>:<path> | sha256sum`)
 * (docs/conformance/frameworks.md#pins).
 * @internal
 */
import type { FrameworkPin } from "./model.js";

/** One pinned file; `function` is filled in per model. */
export type PinnedFile = Omit<FrameworkPin, "function">;

const VERL = "verl-project/verl";
const OPENRLHF = "OpenRLHF/OpenRLHF";
const TRL = "huggingface/trl";

/** verl `verl/trainer/ppo/core_algos.py` at polgrad's pin and at the head read. */
export const VERL_FILES: Readonly<Record<"74a718a4" | "1dda039b", PinnedFile>> = {
  "74a718a4": {
    repo: VERL,
    commit: "74a718a492092312f1004fe25369975137388849",
    label: "74a718a4",
    path: "verl/trainer/ppo/core_algos.py",
    sha256: "9114f9e16c87e4c9ebf2fa016baf733c9bbc819766b53c8968aaa9e8abcd7916",
  },
  "1dda039b": {
    repo: VERL,
    commit: "1dda039b9c6311889a9c9a26040677e1254814f9",
    label: "1dda039b",
    path: "verl/trainer/ppo/core_algos.py",
    sha256: "0ec87b90cba24fa0aa959adff573efb2cc49434d705621cf546be231e56a8932",
  },
};

/** OpenRLHF `openrlhf/models/loss.py` (PolicyLoss) at polgrad's pin and at the head read. */
export const OPENRLHF_LOSS_FILES: Readonly<Record<"bc71bb19" | "3c3be623", PinnedFile>> = {
  bc71bb19: {
    repo: OPENRLHF,
    commit: "bc71bb19464aca306b33080b2d2bb45d154e2f49",
    label: "bc71bb19",
    path: "openrlhf/models/loss.py",
    sha256: "d1dea3b37cb4c647a1a4b2472fbaefb025ac7ffb50688408d33af4c66a957551",
  },
  "3c3be623": {
    repo: OPENRLHF,
    commit: "3c3be6234e0cb353e76bb8019947db9dfe99fca7",
    label: "3c3be623",
    path: "openrlhf/models/loss.py",
    sha256: "21e97ce9a023663ac12f67df165e3d8cccb3ffc358c4765b5daf6fc02bd941a1",
  },
};

/** OpenRLHF `openrlhf/models/utils.py` (compute_approx_kl); the same bytes at both commits. */
export const OPENRLHF_UTILS_FILES: Readonly<Record<"bc71bb19" | "3c3be623", PinnedFile>> = {
  bc71bb19: {
    ...OPENRLHF_LOSS_FILES.bc71bb19,
    path: "openrlhf/models/utils.py",
    sha256: "afea248aa7bb2fb09d3eebce9d582cb98a8f904425ba1698c2ee38ca46e8dcb1",
  },
  "3c3be623": {
    ...OPENRLHF_LOSS_FILES["3c3be623"],
    path: "openrlhf/models/utils.py",
    sha256: "afea248aa7bb2fb09d3eebce9d582cb98a8f904425ba1698c2ee38ca46e8dcb1",
  },
};

/** TRL `trl/trainer/grpo_trainer.py` at tag v1.8.0 (polgrad's pin) and at the head read. */
export const TRL_FILES: Readonly<Record<"v1.8.0" | "f2cd5771", PinnedFile>> = {
  "v1.8.0": {
    repo: TRL,
    commit: "95809b942eb5d11d0b06d749510d88be99230b73",
    label: "v1.8.0",
    path: "trl/trainer/grpo_trainer.py",
    sha256: "52d9a6c1e298df35d0da4a6fa17874d750ee627f6ac15393c8860d74d1ba4917",
  },
  f2cd5771: {
    repo: TRL,
    commit: "f2cd57710ae345ea6428ae95363267fcf38a3dc8",
    label: "f2cd5771",
    path: "trl/trainer/grpo_trainer.py",
    sha256: "655d9ad98549290fd32381174bfca5cab9f849b839966edc9a4d3abe67dd97bc",
  },
};
