/**
 * The types of drift pins and drift reports (docs/conformance/drift.md). A leaf module: the
 * generated pins (./pins.ts) and the checker (./drift.ts) both import it, and it imports nothing.
 */

/** The frameworks with pinned definitions. */
export type DriftFramework = "verl" | "openrlhf" | "trl";

/** What to track in one file: its path in the repository and the qualified definition names. */
export interface TrackedFile {
  readonly path: string;
  readonly definitions: readonly string[];
}

/** What to track in one framework, at which commit. */
export interface TrackedFramework {
  readonly framework: string;
  readonly repo: string;
  readonly commit: string;
  readonly files: readonly TrackedFile[];
}

/** One definition as recorded at the pin: its line span and segment hash. */
export interface PinnedDefinition {
  readonly name: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly sha256: string;
}

/** One file as recorded at the pin: the SHA-256 of its bytes and its tracked definitions. */
export interface DriftPinnedFile {
  readonly path: string;
  readonly sha256: string;
  readonly definitions: readonly PinnedDefinition[];
}

/** A framework's pins: repository, commit, and the recorded files. */
export interface DriftPins {
  readonly framework: string;
  readonly repo: string;
  readonly commit: string;
  readonly files: readonly DriftPinnedFile[];
}

/** A definition's status in the checkout relative to the pin. */
export type DefinitionStatus = "unchanged" | "changed" | "missing";

/** Whether a pinned file's bytes are the same in the checkout. */
export type FileHashStatus = "equal" | "different" | "missing";

/** A 1-based inclusive line span. */
export interface LineSpan {
  readonly start: number;
  readonly end: number;
}

/** One tracked definition compared. */
export interface DefinitionDrift {
  readonly name: string;
  readonly status: DefinitionStatus;
  readonly pinnedSha256: string;
  /** The checkout's segment hash; null when the definition (or its file) is missing. */
  readonly checkoutSha256: string | null;
  readonly pinnedLines: LineSpan;
  readonly checkoutLines: LineSpan | null;
}

/** One tracked file compared. */
export interface FileDrift {
  readonly path: string;
  readonly fileHash: FileHashStatus;
  readonly pinnedSha256: string;
  readonly checkoutSha256: string | null;
  readonly definitions: readonly DefinitionDrift[];
}

/** The result of `driftCheck`. */
export interface DriftReport {
  readonly framework: string;
  readonly repo: string;
  readonly pinnedCommit: string;
  /** The checkout directory, absolute. */
  readonly checkout: string;
  /** True when any tracked definition is changed or missing (a differing file hash alone is not drift). */
  readonly driftDetected: boolean;
  readonly counts: {
    readonly unchanged: number;
    readonly changed: number;
    readonly missing: number;
    readonly total: number;
  };
  readonly files: readonly FileDrift[];
}

/** Options of `driftCheck`. */
export interface DriftOptions {
  /** Pins to compare against instead of the built-in `DRIFT_PINS` entry. */
  readonly pins?: DriftPins;
}
