/**
 * The tensor names of verl, TRL and OpenRLHF, as data (docs/io.md#names-as-trainers-spell-them):
 * for each framework, every name its policy-loss path uses, the polgrad batch name it stands for
 * (or null: known, not used by polgrad), and the file and line where it was read, at the commit
 * recorded in each map. Leaf module: no imports. Read from the frameworks' git history with
 * `git show <commit>:<path>`; no upstream code is stored here.
 *
 * A name may mean different tensors in different places of one framework (OpenRLHF's
 * `action_log_probs` is the rollout-time policy inside an `Experience` and the current policy
 * inside `training_step`). Each map lists a name once, with the meaning it has in the object a
 * user dumps (verl's batch, TRL's `inputs`, OpenRLHF's `Experience`); the other meaning is in the
 * entry's note.
 */

/** Where a name was read: a file of the framework's repository and a 1-based line. */
export interface NameSource {
  readonly path: string;
  readonly line: number;
  /** The commit the line was read at, when it is not the map's `commit` (a file since deleted). */
  readonly commit?: string;
}

/** One of a framework's tensor names and the polgrad batch name it stands for. */
export interface NameMapEntry {
  /** The framework's name (a batch key, a dict key or a dataclass field). */
  readonly theirs: string;
  /** The polgrad batch name (docs/io.md#tensor-names); null = known to the framework, not used. */
  readonly ours: string | null;
  readonly source: NameSource;
  readonly note?: string;
}

/** The name map of one framework, read at one commit. */
export interface FrameworkNameMap {
  readonly id: "verl" | "trl" | "openrlhf";
  /** GitHub owner/name. */
  readonly repo: string;
  /** The full commit the entries were read at. */
  readonly commit: string;
  /** The mask and padding conventions of the framework's tensors. */
  readonly note?: string;
  readonly entries: readonly NameMapEntry[];
}

const VERL_AGENT_LOOP = "verl/experimental/agent_loop/agent_loop.py";
const VERL_LOSSES = "verl/workers/utils/losses.py";
const VERL_CORE = "verl/trainer/ppo/core_algos.py";
const VERL_TRAINER = "verl/trainer/ppo/ray_trainer.py";
const VERL_V1 = "verl/trainer/ppo/v1/trainer_base.py";

const VERL: FrameworkNameMap = {
  id: "verl",
  repo: "verl-project/verl",
  commit: "1dda039b9c6311889a9c9a26040677e1254814f9",
  note:
    "Tensors of the trainer's batch are [B, T] over the response only, right-padded " +
    "(agent_loop.py:730-741). attention_mask, input_ids and position_ids are [B, P+T] over " +
    "prompt + response, the prompt left-padded (agent_loop.py:723-728); the response part is the " +
    "last T columns, and without a response_mask verl takes attention_mask[:, -T:] " +
    "(ray_trainer.py:120-135, 1543-1544). In multi-turn rollouts response_mask is also 0 on " +
    "tool-response tokens inside the response (agent_loop.py:95-96), so attention_mask[:, -T:] " +
    "is not the loss mask there. The default trainer (trainer.use_v1, v1/trainer_base.py) keeps " +
    "tensors nested (jagged) in a transfer queue; `.to_padded_tensor()` gives the right-padded " +
    "[B, T] form. Advantages are [B, T] (outcome estimators broadcast the row value over the " +
    "response tokens times the mask).",
  entries: [
    {
      theirs: "log_probs",
      ours: "logprobs",
      source: { path: VERL_LOSSES, line: 59 },
      note:
        "The current policy: model_output['log_probs'] inside ppo_loss. It is never a key of the " +
        "trainer's batch (the workers' raw log_probs are renamed to old_log_probs / ref_log_prob " +
        "there, v1/trainer_base.py:1562, 1611); a trainer-side dump writes it only if the user does.",
    },
    {
      theirs: "log_prob",
      ours: "logprobs",
      source: { path: VERL_CORE, line: 1288 },
      note: "The current policy as the policy-loss functions' argument (compute_policy_loss_*).",
    },
    {
      theirs: "old_log_probs",
      ours: "old_logprobs",
      source: { path: VERL_LOSSES, line: 95 },
      note:
        "π_old: recomputed by the actor before the update (v1/trainer_base.py:1562; legacy " +
        "ray_trainer.py:1318). In bypass mode it is a copy of rollout_log_probs " +
        "(v1/trainer_base.py:1541).",
    },
    {
      theirs: "old_log_prob",
      ours: "old_logprobs",
      source: { path: VERL_CORE, line: 1287 },
      note: "π_old as the policy-loss functions' argument.",
    },
    {
      theirs: "ref_log_prob",
      ours: "ref_logprobs",
      source: { path: VERL_LOSSES, line: 133 },
      note: "Written by the trainer at v1/trainer_base.py:1611 (legacy ray_trainer.py:1285).",
    },
    {
      theirs: "rollout_log_probs",
      ours: "rollout_logprobs",
      source: { path: VERL_AGENT_LOOP, line: 1042 },
      note: "The inference engine's log-probabilities; present when rollout.calculate_log_probs is on.",
    },
    {
      theirs: "response_mask",
      ours: "response_mask",
      source: { path: VERL_AGENT_LOOP, line: 1052 },
      note:
        "[B, T] int64 over the response only: 1 on generated tokens, 0 on padding and on " +
        "tool-response tokens (agent_loop.py:95-96, 120); read as bool by ppo_loss (losses.py:93).",
    },
    {
      theirs: "advantages",
      ours: "advantages",
      source: { path: VERL_LOSSES, line: 96 },
      note: "[B, T]; written by compute_advantage (ray_trainer.py:246).",
    },
    {
      theirs: "values",
      ours: "old_values",
      source: { path: VERL_CORE, line: 2127 },
      note:
        "The critic's values computed before the update (v1/trainer_base.py:1633; legacy " +
        "ray_trainer.py:1262): the clip centre of compute_value_loss, i.e. polgrad's old_values. " +
        "The current prediction is vpreds.",
    },
    {
      theirs: "vpreds",
      ours: "values",
      source: { path: VERL_CORE, line: 2125 },
      note: "The critic's current prediction (compute_value_loss's first argument).",
    },
    {
      theirs: "returns",
      ours: "returns",
      source: { path: VERL_LOSSES, line: 183 },
      note: "[B, T]; written by compute_advantage (ray_trainer.py:228).",
    },
    {
      theirs: "entropy",
      ours: "entropies",
      source: { path: VERL_V1, line: 1563 },
      note:
        "Per-token entropy of π_old written back by the default trainer; inside ppo_loss the same " +
        "key of model_output is the current policy's (losses.py:60).",
    },
    {
      theirs: "entropys",
      ours: "entropies",
      source: { path: VERL_TRAINER, line: 1318 },
      note:
        "Legacy trainer's name for π_old's entropy; popped before the batch union " +
        "(ray_trainer.py:1601), so it is in a dump only if taken before that line.",
    },
    {
      theirs: "attention_mask",
      ours: null,
      source: { path: VERL_AGENT_LOOP, line: 1054 },
      note:
        "[B, P+T] over prompt + response; verl's fallback response_mask is attention_mask[:, -T:] " +
        "(ray_trainer.py:134-135), equal to response_mask only for single-turn rollouts.",
    },
    { theirs: "prompts", ours: null, source: { path: VERL_AGENT_LOOP, line: 1050 } },
    { theirs: "responses", ours: null, source: { path: VERL_AGENT_LOOP, line: 1051 } },
    { theirs: "input_ids", ours: null, source: { path: VERL_AGENT_LOOP, line: 1053 } },
    { theirs: "position_ids", ours: null, source: { path: VERL_AGENT_LOOP, line: 1056 } },
    { theirs: "rm_scores", ours: null, source: { path: VERL_AGENT_LOOP, line: 1068 } },
    {
      theirs: "token_level_scores",
      ours: "rewards",
      source: { path: VERL_TRAINER, line: 1633 },
      note: "[B, T]: the reward function's score at each sequence's last response token (reward_manager/naive.py:153); summed it is the sequence score verl logs as critic/score/* (metric_utils.py:453).",
    },
    { theirs: "token_level_rewards", ours: null, source: { path: VERL_TRAINER, line: 1645 } },
    {
      theirs: "rollout_is_weights",
      ours: null,
      source: { path: VERL_LOSSES, line: 97 },
      note: "Precomputed IS weights; polgrad computes its own from rollout_logprobs (config.is_correction).",
    },
    { theirs: "sum_pi_squared", ours: null, source: { path: VERL_TRAINER, line: 1322 } },
    { theirs: "routed_experts", ours: null, source: { path: VERL_AGENT_LOOP, line: 1044 } },
    { theirs: "teacher_logprobs", ours: null, source: { path: VERL_AGENT_LOOP, line: 1046 } },
    {
      theirs: "loss_mask",
      ours: null,
      source: { path: "verl/workers/utils/padding.py", line: 71 },
      note: "The no-padding (nested) copy of response_mask made inside the workers.",
    },
  ],
};

const TRL_GRPO = "trl/trainer/grpo_trainer.py";
const TRL_PAPO = "trl/experimental/papo/papo_trainer.py";
const TRL_V0_29_1 = "617406a4e69551c115c145114497999618d24f3c";

const TRL: FrameworkNameMap = {
  id: "trl",
  repo: "huggingface/trl",
  commit: "f2cd57710ae345ea6428ae95363267fcf38a3dc8",
  note:
    "The tensors of GRPOTrainer's inputs (the dict _generate_and_score_completions returns, " +
    "grpo_trainer.py:2815-2853) are [B, C] over the completion only, right-padded; prompt_ids " +
    "and prompt_mask are [B, P], left-padded; the model's attention mask is " +
    "cat([prompt_mask, completion_mask], 1), [B, P+C], built inside _compute_loss " +
    "(grpo_trainer.py:2996), so the completion part is the last C columns. Advantages are [B] " +
    "(one per completion). The loss mask is completion_mask, times tool_mask when present " +
    "(grpo_trainer.py:2998). per_token_logps exists only inside _compute_loss.",
  entries: [
    {
      theirs: "per_token_logps",
      ours: "logprobs",
      source: { path: TRL_GRPO, line: 3001 },
      note: "The current policy, computed inside _compute_loss (not a key of inputs).",
    },
    {
      theirs: "old_per_token_logps",
      ours: "old_logprobs",
      source: { path: TRL_GRPO, line: 3036 },
      note:
        "May be absent: it is computed only when num_iterations > 1, generation and optimisation " +
        "steps are mismatched, or vLLM IS correction is on (grpo_trainer.py:2556-2576, 2823); " +
        "absent, TRL uses per_token_logps.detach() (grpo_trainer.py:3037), ratio 1.",
    },
    {
      theirs: "ref_per_token_logps",
      ours: "ref_logprobs",
      source: { path: TRL_GRPO, line: 3070 },
      note: "Present only when beta != 0 (grpo_trainer.py:2829-2830).",
    },
    {
      theirs: "sampling_per_token_logps",
      ours: "rollout_logprobs",
      source: { path: TRL_GRPO, line: 2828 },
      note: "The vLLM sampler's log-probabilities (grpo_trainer.py:2398-2407).",
    },
    {
      theirs: "completion_mask",
      ours: "response_mask",
      source: { path: TRL_GRPO, line: 2994 },
      note:
        "[B, C], right-padded; truncated completions are zeroed when mask_truncated_completions " +
        "(grpo_trainer.py:2421). With tool_mask the loss mask is completion_mask * tool_mask.",
    },
    {
      theirs: "advantages",
      ours: "advantages",
      source: { path: TRL_GRPO, line: 3026 },
      note: "[B]; unsqueezed to [B, 1] in the loss; subclasses may give [B, T] (grpo_trainer.py:3027-3030).",
    },
    {
      theirs: "entropies",
      ours: "entropies",
      source: { path: TRL_GRPO, line: 3001 },
      note: "Of the current policy, computed inside _compute_loss.",
    },
    {
      theirs: "mask_img_per_token_logps",
      ours: "masked_logprobs",
      source: { path: TRL_PAPO, line: 296, commit: TRL_V0_29_1 },
      note: "PAPO (tag v0.29.1): the current policy with the image masked; papo_trainer.py is deleted from v1.8.0.",
    },
    {
      theirs: "mask_img_entropies",
      ours: "masked_entropies",
      source: { path: TRL_PAPO, line: 296, commit: TRL_V0_29_1 },
      note: "PAPO (tag v0.29.1): that view's entropies, computed under no_grad.",
    },
    {
      theirs: "attention_mask",
      ours: null,
      source: { path: TRL_GRPO, line: 2996 },
      note: "[B, P+C] = cat([prompt_mask, completion_mask]); the completion part is the last C columns.",
    },
    { theirs: "prompt_ids", ours: null, source: { path: TRL_GRPO, line: 2816 } },
    { theirs: "prompt_mask", ours: null, source: { path: TRL_GRPO, line: 2817 } },
    { theirs: "completion_ids", ours: null, source: { path: TRL_GRPO, line: 2818 } },
    { theirs: "num_items_in_batch", ours: null, source: { path: TRL_GRPO, line: 2821 } },
    {
      theirs: "importance_sampling_ratio",
      ours: null,
      source: { path: TRL_GRPO, line: 2826 },
      note: "TRL's precomputed vLLM IS ratio; polgrad computes its own from rollout_logprobs.",
    },
    {
      theirs: "tool_mask",
      ours: null,
      source: { path: TRL_GRPO, line: 2852 },
      note: "Multiplies completion_mask in the loss (grpo_trainer.py:2998); fold it into completion_mask when dumping.",
    },
    { theirs: "pixel_values", ours: null, source: { path: TRL_GRPO, line: 2832 } },
    { theirs: "image_grid_thw", ours: null, source: { path: TRL_GRPO, line: 2834 } },
    { theirs: "pixel_attention_mask", ours: null, source: { path: TRL_GRPO, line: 2836 } },
    { theirs: "token_type_ids", ours: null, source: { path: TRL_GRPO, line: 2842 } },
  ],
};

const ORL_EXPERIENCE = "openrlhf/trainer/ppo_utils/experience.py";
const ORL_LOSS = "openrlhf/models/loss.py";
const ORL_ACTOR = "openrlhf/trainer/ray/ppo_actor.py";

const OPENRLHF: FrameworkNameMap = {
  id: "openrlhf",
  repo: "OpenRLHF/OpenRLHF",
  commit: "3c3be6234e0cb353e76bb8019947db9dfe99fca7",
  note:
    "Experience tensors (experience.py:40-61): sequences and attention_mask are [B, S] over " +
    "prompt + response; action_mask and the per-action streams are [B, A] over the A action " +
    "(response) tokens; the action part of a sequence-wide tensor is its last A columns " +
    "(ppo_actor.py:347). Experiences are merged right-padded with zeros (experience.py:113). " +
    "Advantages, values and returns are [B, A] (token-level).",
  entries: [
    {
      theirs: "action_log_probs",
      ours: "old_logprobs",
      source: { path: ORL_EXPERIENCE, line: 46 },
      note:
        "In an Experience: the actor's log-probabilities at make_experience time " +
        "(experience_maker.py:222), π_old of the update, read as old_action_log_probs in " +
        "training_step (ppo_actor.py:270). Inside training_step the local action_log_probs " +
        "(ppo_actor.py:294) is the current policy, passed as PolicyLoss's log_probs.",
    },
    {
      theirs: "log_probs",
      ours: "logprobs",
      source: { path: ORL_LOSS, line: 157 },
      note: "The current policy: PolicyLoss.forward's first argument.",
    },
    {
      theirs: "old_log_probs",
      ours: "old_logprobs",
      source: { path: ORL_LOSS, line: 158 },
      note: "π_old: PolicyLoss.forward's argument, Experience.action_log_probs.",
    },
    {
      theirs: "old_action_log_probs",
      ours: "old_logprobs",
      source: { path: ORL_ACTOR, line: 270 },
    },
    {
      theirs: "base_action_log_probs",
      ours: "ref_logprobs",
      source: { path: ORL_EXPERIENCE, line: 47 },
      note: "None unless the KL is a loss term (experience_maker.py:218-219).",
    },
    {
      theirs: "rollout_log_probs",
      ours: "rollout_logprobs",
      source: { path: ORL_EXPERIENCE, line: 48 },
      note: "vLLM's log-probabilities (samples_generator.py:271); PolicyLoss's rollout_log_probs (loss.py:161).",
    },
    {
      theirs: "action_mask",
      ours: "response_mask",
      source: { path: ORL_EXPERIENCE, line: 43 },
      note: "[B, A] bool over the action tokens; PolicyLoss's action_mask (loss.py:160).",
    },
    {
      theirs: "advantages",
      ours: "advantages",
      source: { path: ORL_EXPERIENCE, line: 53 },
      note: "[B, A]; PolicyLoss's advantages (loss.py:159).",
    },
    {
      theirs: "values",
      ours: "old_values",
      source: { path: ORL_EXPERIENCE, line: 51 },
      note:
        "In an Experience: the critic at make_experience time (experience_maker.py:224), the clip " +
        "centre of the value loss. ValueLoss.forward's values (loss.py:245) is the current " +
        "prediction and its old_values (loss.py:246) is this tensor.",
    },
    {
      theirs: "old_values",
      ours: "old_values",
      source: { path: ORL_LOSS, line: 246 },
    },
    {
      theirs: "returns",
      ours: "returns",
      source: { path: ORL_EXPERIENCE, line: 52 },
    },
    {
      theirs: "entropy",
      ours: "entropies",
      source: { path: ORL_ACTOR, line: 347 },
      note:
        "The actor output's entropy of the current policy, sequence-wide; the action part is " +
        "output.entropy[:, -A:] (ppo_actor.py:347). Not an Experience field.",
    },
    {
      theirs: "attention_mask",
      ours: null,
      source: { path: ORL_EXPERIENCE, line: 42 },
      note: "[B, S] over prompt + response; action_mask is the response part.",
    },
    { theirs: "sequences", ours: null, source: { path: ORL_EXPERIENCE, line: 41 } },
    {
      theirs: "kl",
      ours: null,
      source: { path: ORL_EXPERIENCE, line: 54 },
      note: "Set to None after the advantages are computed (experience_maker.py:312).",
    },
    {
      theirs: "rewards",
      ours: "rewards",
      source: { path: ORL_EXPERIENCE, line: 57 },
      note: "[B]: each sample's reward R, used for the advantages.",
    },
    { theirs: "scores", ours: null, source: { path: ORL_EXPERIENCE, line: 58 } },
    { theirs: "response_length", ours: null, source: { path: ORL_EXPERIENCE, line: 59 } },
    {
      theirs: "truncated",
      ours: "truncated",
      source: { path: ORL_EXPERIENCE, line: 60 },
      note: "[B]: whether generation was cut at the length limit.",
    },
    { theirs: "total_length", ours: null, source: { path: ORL_EXPERIENCE, line: 61 } },
  ],
};

/**
 * The name maps of verl, TRL and OpenRLHF (docs/io.md#names-as-trainers-spell-them).
 *
 * Format: one {@link FrameworkNameMap} per framework; each `theirs` occurs once per map; `ours`
 * is a polgrad batch name or null (known, not used); `source` is `path:line` at `commit` (or at
 * `source.commit`).
 *
 * @derivation docs/io.md#names-as-trainers-spell-them
 * @enforcedBy test/howto/recipes.test.ts > framework name maps > golden: every map names each framework tensor once and maps onto polgrad batch names
 * @since 0.1.0
 */
export const FRAMEWORK_NAME_MAPS: readonly FrameworkNameMap[] = [VERL, TRL, OPENRLHF];
