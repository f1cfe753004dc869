/**
 * The types of adapter contracts (docs/conformance/adapters.md): what an adapter's authors state
 * about the framework it runs on — per method an exact parameter tuple, a required set, a
 * forbidden set, a return arity; per file a SHA-256 pin — and the reports of checking one tree
 * or every tag of a git directory. A leaf module: it imports nothing.
 */

/** Failure-message templates of one method rule; `{method}`, `{path}` and the rule's own fields. */
export interface MethodMessages {
  /** `{signature}`: the parameter tuple as Python prints it. */
  readonly exact?: string;
  /** `{missing}`: the missing names, sorted, joined by ", ". */
  readonly requires?: string;
  /** `{forbidden}`: the forbidden names present, sorted, joined by ", ". */
  readonly forbids?: string;
  /** `{returns}`: the arities found; `{expected}`: the stated one. */
  readonly returns?: string;
  /** The method (or its file) is not in the tree. */
  readonly missing?: string;
}

/** What a contract states about one method of the framework. */
export interface MethodRule {
  /** Qualified name, e.g. `GRPOTrainer._compute_loss`. */
  readonly name: string;
  /** The file that defines it, from the repository root. */
  readonly path: string;
  /** The parameter names, in order, must equal this tuple (`tuple(signature.parameters)`). */
  readonly exact: readonly string[] | null;
  /** These names must all be parameters (a subset check: extras allowed). */
  readonly requires: readonly string[] | null;
  /** None of these names may be a parameter. */
  readonly forbids: readonly string[] | null;
  /** Every `return` must give this many values. */
  readonly returns: number | null;
  readonly messages: MethodMessages;
}

/** A file pinned by the SHA-256 of its bytes, as it was at `ref` (the adapter's vendored copy). */
export interface FilePin {
  readonly path: string;
  readonly sha256: string;
  /** The release the bytes come from (a tag), or null. */
  readonly ref: string | null;
}

/** One of polgrad's stricter checks, reported beside the authors' rule, never in its place. */
export interface StricterRule {
  /**
   * `unpacking`: the method's return arity equals the number of targets the pinned file assigns
   * from `self.<method>(…)`; `keywords`: every keyword the pinned file passes there is a parameter.
   */
  readonly kind: "unpacking" | "keywords";
  /** The method rule it concerns (its qualified name). */
  readonly method: string;
  /** The pinned file whose call sites are read (a {@link FilePin} path). */
  readonly caller: string;
}

/** An adapter contract: the authors' rule (methods, files) and polgrad's stricter checks. */
export interface AdapterContract {
  readonly name: string;
  /** The adapter's version label, e.g. `trl_0.29.1_papo_g_on_trl_1.9.1_v1`. */
  readonly version: string;
  /** The framework the tree belongs to, e.g. `trl`. */
  readonly framework: string;
  readonly description: string;
  readonly methods: readonly MethodRule[];
  readonly files: readonly FilePin[];
  readonly stricter: readonly StricterRule[];
}

/** How a method fared under the authors' rule. */
export interface MethodVerdict {
  readonly name: string;
  readonly path: string;
  readonly status: "ok" | "broken" | "missing";
  /** The tree's parameter names in order, or null when the method is missing. */
  readonly parameters: readonly string[] | null;
  /** The distinct arities of its returns (null: a starred return, or the method is missing). */
  readonly returnArities: readonly number[] | null;
  /** The authors' failure messages, in rule order (exact, requires, forbids, returns). */
  readonly failures: readonly string[];
}

/** A file's bytes against its pin. */
export type PinStatus = "identical" | "changed" | "missing";

/** One pinned file checked. */
export interface FilePinCheck {
  readonly path: string;
  readonly pinnedSha256: string;
  readonly ref: string | null;
  /** The tree's own file at `path`. */
  readonly tree: PinStatus;
  readonly treeSha256: string | null;
  /** The vendored copy given (`--vendored`), or null; a changed copy fails the contract. */
  readonly vendored: {
    readonly path: string;
    readonly status: "identical" | "changed";
    readonly sha256: string;
  } | null;
}

/** One stricter check's result. */
export interface StricterFinding {
  readonly kind: StricterRule["kind"];
  readonly method: string;
  readonly caller: string;
  /** `unknown` when the method or the pinned file's copy is not available. */
  readonly status: "ok" | "mismatch" | "unknown";
  /** Where the caller's bytes came from: `--vendored PATH`, `tree`, `ref v0.29.1`, or null. */
  readonly callerSource: string | null;
  /** The tree's return arities (unpacking) — null when unknown. */
  readonly returns: readonly number[] | null;
  /** The caller's target counts (unpacking), ascending — null when unknown. */
  readonly unpacks: readonly number[] | null;
  /** The keywords the caller passes that the tree's method does not take (keywords). */
  readonly unknownKeywords: readonly string[];
  readonly message: string;
}

/** The result of checking one tree (a checkout) against an adapter contract. */
export interface AdapterCheckReport {
  readonly contract: string;
  readonly version: string;
  readonly framework: string;
  readonly checkout: string;
  /** The authors' rule on the tree, and the vendored copy's pin when one was given. */
  readonly ok: boolean;
  /** Every failure that decides `ok`, authors' messages first. */
  readonly failures: readonly string[];
  readonly methods: readonly MethodVerdict[];
  readonly files: readonly FilePinCheck[];
  readonly stricter: readonly StricterFinding[];
  /** True when every stricter check is ok (it never decides `ok`). */
  readonly stricterOk: boolean;
}

/** One row of an adapter table: one ref of a git directory. */
export interface AdapterTableRow {
  readonly ref: string;
  /** The commit it names, or null when it names none (then every verdict is `missing`). */
  readonly commit: string | null;
  /** Per pinned file, the tree's bytes against the pin. */
  readonly files: readonly { readonly path: string; readonly status: PinStatus }[];
  readonly methods: readonly MethodVerdict[];
  /** The authors' rule holds at this ref. */
  readonly authorsOk: boolean;
  readonly stricter: readonly StricterFinding[];
  readonly stricterOk: boolean;
}

/** The result of checking every tag (or the given refs) of a git directory. */
export interface AdapterTable {
  readonly contract: string;
  readonly version: string;
  readonly git: string;
  readonly rows: readonly AdapterTableRow[];
  /** The first and last row where the authors' rule holds, or null. */
  readonly authors: { readonly firstPassing: string | null; readonly lastPassing: string | null };
  /** The first and last row where the authors' rule and every stricter check hold, or null. */
  readonly all: { readonly firstPassing: string | null; readonly lastPassing: string | null };
}
