/** The report type of assertConforms (`polgrad/testing`), in the library so that renderers can read it. */
import type { MismatchDiagnosis } from "./nearestMatch.js";

/** The report of assertConforms (polgrad's DeviationReport plus the worst case and a diagnosis). */
export interface ConformanceReport {
  readonly maxLossRelDiff: number;
  readonly maxGradRelDiff: number;
  readonly gradCosineMin: number;
  readonly cases: number;
  /** The first case maximising max(loss rel, grad rel): its index, seed and shape. */
  readonly worstCase: {
    readonly index: number;
    readonly seed: number;
    readonly shape: readonly [number, number];
  };
  readonly lossRtol: number;
  readonly gradRtol: number;
  readonly conforms: boolean;
  readonly notes: readonly string[];
  /** A line that replays the worst case. */
  readonly replay: string;
  /** Only when the check fails and the reference is a config: the nearest configuration it matches. */
  readonly diagnosis: MismatchDiagnosis | null;
}
