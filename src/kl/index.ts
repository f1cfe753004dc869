/**
 * KL regularisation toward a reference policy: per-token estimators of KL(π‖ref), the as-loss
 * term with its gradient, the in-reward penalty, the adaptive coefficient controller, and the
 * score-function surrogate
 * (docs/derivations/kl.md).
 */
export { KL_ESTIMATORS, KLEstimator, type KLLossConfig } from "./estimator.js";
export { type AdaptiveKLOptions, adaptiveKlCoef } from "./klController.js";
export { klEstimate } from "./klEstimate.js";
export { klInReward } from "./klInReward.js";
export { type KLAggregateOptions, klLoss, type LossWithGrad } from "./klLoss.js";
export { reverseKlGradSurrogate } from "./reverseKlGradSurrogate.js";
