/**
 * The types of signature contracts (docs/conformance/drift.md#signature-contracts): a pinned
 * method, a pinned file hash, a contract, and a check's report. A leaf module: the generated pins
 * (./pins.ts) and the checker (./signature.ts) both import it, and it imports neither.
 */
import type { PythonParameter } from "../conformance/python/signature.js";
import type { ParameterDiff } from "../conformance/python/signatureDiff.js";

/** One method's pinned signature. */
export interface PinnedMethod {
  /** Qualified name, e.g. `GRPOTrainer._compute_loss`. */
  readonly name: string;
  /** The file that defines it, relative to the repository root. */
  readonly path: string;
  readonly parameters: readonly PythonParameter[];
  readonly returnAnnotation: string | null;
}

/** A file pinned by the SHA-256 of its bytes. */
export interface PinnedFileHash {
  readonly path: string;
  readonly sha256: string;
}

/** A named contract: the signatures and file hashes of one framework release. */
export interface SignatureContract {
  /** `<framework>@<tag>`, e.g. `trl@v0.29.1`. */
  readonly name: string;
  readonly repo: string;
  readonly tag: string;
  readonly commit: string;
  readonly methods: readonly PinnedMethod[];
  readonly files: readonly PinnedFileHash[];
}

/** What to record for a contract (the input of `recordContract`). */
export interface SignatureContractSpec {
  readonly name: string;
  readonly repo: string;
  readonly tag: string;
  readonly commit: string;
  readonly methods: readonly { readonly name: string; readonly path: string }[];
  readonly files: readonly string[];
}

/** One pinned file's bytes compared. */
export interface FileHashCheck {
  readonly path: string;
  readonly status: "equal" | "different" | "missing";
  readonly pinnedSha256: string;
  readonly checkoutSha256: string | null;
}

/** Whether a method still has its pinned signature. */
export type MethodStatus = "ok" | "broken" | "missing";

/** One pinned method compared. */
export interface MethodCheck extends ParameterDiff {
  readonly name: string;
  readonly path: string;
  readonly status: MethodStatus;
  readonly returnAnnotation: {
    readonly pinned: string | null;
    readonly checkout: string | null;
    readonly changed: boolean;
  };
}

/** The result of `checkContract`. */
export interface SignatureContractReport {
  readonly pin: string;
  readonly repo: string;
  readonly tag: string;
  readonly commit: string;
  readonly checkout: string;
  /** True when every file hash is equal and every method has its pinned signature. */
  readonly ok: boolean;
  readonly files: readonly FileHashCheck[];
  readonly methods: readonly MethodCheck[];
}
