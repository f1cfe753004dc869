/**
 * The polgrad playground (docs/playground.md): an editable ragged batch, the which table, one
 * chosen configuration's loss, per-token gradient heat map and per-sequence gradient mass. Plain
 * DOM code over the browser entry; everything runs in this page and nothing is fetched or sent.
 */
import {
  ALGORITHM_NAMES,
  ALGORITHMS,
  type AlgorithmName,
  BUILTIN_BATCH,
  FRAMEWORK_MODEL_IDS,
  getFrameworkModel,
  type MaskLike,
  type MatrixLike,
  PolgradError,
  type PolicyLossConfig,
  type PolicyLossInputs,
  policyLoss,
  readTensorsFromBytes,
  toBatch,
  type VectorLike,
  type WhichReport,
  whichTable,
} from "../src/browser.ts";
import { isRealSized } from "../src/report/realSized.ts";
import { spread } from "../src/report/sequenceSummary.ts";
import { massOf } from "../src/which/whichTable.ts";
import { el } from "./dom.ts";
import {
  renderRaster,
  renderSequenceDetail,
  renderTopMass,
  renderWhichSummary,
  VirtualList,
} from "./realSized.ts";

type Rows = number[][];

/** A batch as plain nested rows: what the editor starts from. */
interface BaseBatch {
  readonly label: string;
  readonly logprobs: Rows;
  readonly oldLogprobs: Rows;
  /** `[B]` per-sequence (editable) or `[B, T]` per-token (shown, not editable). */
  readonly advantages: number[] | Rows;
  readonly mask: Rows;
  /** Optional streams passed through unchanged (KL, IS correction, entropy configurations). */
  readonly extra: Readonly<Partial<Record<"refLogprobs" | "rolloutLogprobs" | "entropies", Rows>>>;
}

/** What the controls hold. */
interface Edits {
  lengths: number[];
  advantages: number[];
  gap: number;
}

// ---------------------------------------------------------------------------------------------
// Batch conversion and the edit rule

function isDense(
  x: unknown,
): x is { rows: number; cols: number; data: ArrayLike<number | boolean> } {
  return typeof x === "object" && x !== null && !Array.isArray(x) && "data" in x && "cols" in x;
}

/** Nested number rows of a matrix or mask in any of the library's accepted forms. */
function rowsOf(x: MatrixLike | MaskLike): Rows {
  if (isDense(x)) {
    const out: Rows = [];
    for (let b = 0; b < x.rows; b++) {
      const row: number[] = [];
      for (let t = 0; t < x.cols; t++) row.push(Number(x.data[b * x.cols + t]));
      out.push(row);
    }
    return out;
  }
  return Array.from(x as ArrayLike<ArrayLike<number | boolean>>, (r) => Array.from(r, Number));
}

/** `[B]` advantages as a number array, `[B, T]` ones as rows. */
function advantagesOf(x: VectorLike | MatrixLike): number[] | Rows {
  if (isDense(x)) return rowsOf(x);
  const first = (x as ArrayLike<unknown>)[0];
  if (typeof first === "object" && first !== null) return rowsOf(x as MatrixLike);
  return Array.from(x as ArrayLike<number>, Number);
}

function baseFrom(inputs: PolicyLossInputs, label: string): BaseBatch {
  const extra: Partial<Record<"refLogprobs" | "rolloutLogprobs" | "entropies", Rows>> = {};
  for (const k of ["refLogprobs", "rolloutLogprobs", "entropies"] as const) {
    const v = inputs[k];
    if (v !== undefined && v !== null) extra[k] = rowsOf(v);
  }
  return {
    label,
    logprobs: rowsOf(inputs.logprobs),
    oldLogprobs: rowsOf(inputs.oldLogprobs),
    advantages: advantagesOf(inputs.advantages),
    mask: rowsOf(inputs.responseMask),
    extra,
  };
}

/**
 * The built-in batch as the page loads it: polgrad's which batch has no reference or rollout
 * stream, so, as `polgrad explain` does for it, ref_logprobs := old_logprobs (the first step: the
 * reference is the old policy) and rollout_logprobs := old_logprobs (no engine mismatch: every IS
 * weight 1). KL and IS configurations then evaluate; the label says so.
 */
function builtinBase(): BaseBatch {
  const base = baseFrom(
    BUILTIN_BATCH,
    "the built-in batch (polgrad which: B = 4, T = 8; ref = rollout = old)",
  );
  return {
    ...base,
    extra: { refLogprobs: base.oldLogprobs, rolloutLogprobs: base.oldLogprobs, ...base.extra },
  };
}

const countOnes = (row: readonly number[]): number =>
  row.reduce((a, v) => a + (v === 1 ? 1 : 0), 0);

function isPerSequence(a: number[] | Rows): a is number[] {
  return a.every((v) => typeof v === "number");
}

function initialEdits(base: BaseBatch): Edits {
  return {
    lengths: base.mask.map(countOnes),
    advantages: isPerSequence(base.advantages) ? [...base.advantages] : [],
    gap: 0,
  };
}

/**
 * The batch the page evaluates (docs/playground.md#the-edit-rule):
 * - a row whose length equals its loaded count of response tokens keeps its loaded mask; a row
 *   given another length L gets the prefix mask (t < L);
 * - `[B]` advantages are the edited values; `[B, T]` ones are kept;
 * - old_logprobs[b, t] − gap at every response token (padding untouched), so the log-ratio
 *   logprobs − old_logprobs grows by gap there;
 * - logprobs and the optional streams are kept.
 */
function applyEdits(base: BaseBatch, edits: Edits): PolicyLossInputs {
  const T = base.logprobs[0]?.length ?? 0;
  const mask = base.mask.map((row, b) => {
    const L = edits.lengths[b] as number;
    return L === countOnes(row) ? [...row] : Array.from({ length: T }, (_, t) => (t < L ? 1 : 0));
  });
  const oldLogprobs = base.oldLogprobs.map((row, b) =>
    row.map((v, t) => (mask[b]?.[t] === 1 ? v - edits.gap : v)),
  );
  const advantages = isPerSequence(base.advantages) ? [...edits.advantages] : base.advantages;
  return { ...base.extra, logprobs: base.logprobs, oldLogprobs, advantages, responseMask: mask };
}

// ---------------------------------------------------------------------------------------------
// Configurations

/** `alg:<name>` or `fw:<model id>`: the value of an option of the configuration select. */
type Choice = string;

/** A registry entry's loss config, with dr_grpo's open budget set to the padded width T. */
function algorithmConfig(name: AlgorithmName, T: number): PolicyLossConfig {
  const loss = ALGORITHMS[name].loss;
  return loss.aggregation === "token_sum_norm" && (loss.normLen ?? null) === null
    ? { ...loss, normLen: T }
    : loss;
}

interface Evaluated {
  readonly loss: number;
  readonly grad: Float64Array;
  readonly note: string;
}

function describeConfig(c: PolicyLossConfig): string {
  const parts = [`ratio ${c.ratio}`, `surrogate ${c.surrogate}`, `aggregation ${c.aggregation}`];
  if (c.normLen !== undefined && c.normLen !== null) parts.push(`normLen ${c.normLen}`);
  if (c.kl !== undefined && c.kl !== null) parts.push(`KL ${c.kl.kind} × ${c.kl.coef}`);
  return parts.join(", ");
}

function evaluateChoice(choice: Choice, batch: PolicyLossInputs, T: number): Evaluated {
  if (choice.startsWith("alg:")) {
    const name = choice.slice(4) as AlgorithmName;
    const config = algorithmConfig(name, T);
    const r = policyLoss(config, batch);
    const budget = config === ALGORITHMS[name].loss ? "" : ` (normLen set to T = ${T})`;
    return {
      loss: r.loss,
      grad: r.gradLogprobs.data,
      note: `Registry algorithm ${name}: ${describeConfig(config)}${budget}.`,
    };
  }
  const model = getFrameworkModel(choice.slice(3));
  const r = model.evaluate(batch);
  return { loss: r.loss, grad: r.gradLogprobs.data, note: model.description };
}

// ---------------------------------------------------------------------------------------------
// Formatting and colour

/** A short display form; the full `String(x)` goes in `data-value`. */
function fmt(x: number): string {
  if (x === 0) return "0";
  const a = Math.abs(x);
  return a >= 1e-3 && a < 1e5 ? String(Number(x.toPrecision(6))) : x.toExponential(3);
}

function errorText(e: unknown): string {
  if (e instanceof PolgradError) return `${e.name} (${e.code}): ${e.message}`;
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

/** matplotlib's viridis at 0, 1/8, …, 1 (perceptually uniform, colour-blind safe). */
const VIRIDIS = [
  [0x44, 0x01, 0x54],
  [0x47, 0x2d, 0x7b],
  [0x3b, 0x52, 0x8b],
  [0x2c, 0x72, 0x8e],
  [0x21, 0x91, 0x8c],
  [0x28, 0xae, 0x80],
  [0x5e, 0xc9, 0x62],
  [0xad, 0xdc, 0x30],
  [0xfd, 0xe7, 0x25],
] as const;

/** viridis(u) for u in [0, 1], linear between the anchors above, as `rgb(…)`. */
function viridis(u: number): string {
  const x = Math.min(1, Math.max(0, Number.isFinite(u) ? u : 0)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
  const f = x - i;
  const lo = VIRIDIS[i] as readonly number[];
  const hi = VIRIDIS[i + 1] as readonly number[];
  const c = lo.map((v, k) => Math.round(v + f * ((hi[k] as number) - v)));
  return `rgb(${c.join(", ")})`;
}

// ---------------------------------------------------------------------------------------------
// DOM helpers

function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`playground: #${id} is missing from index.html`);
  return el as T;
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag: string, attrs: Record<string, string | number> = {}): SVGElement {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** A numeric cell: rounded text, the exact value in `data-value`. */
function numberCell(x: number, attrs: Record<string, string>): HTMLTableCellElement {
  return el("td", { ...attrs, "data-value": String(x) }, fmt(x));
}

// ---------------------------------------------------------------------------------------------
// State

const state: {
  base: BaseBatch;
  edits: Edits;
  choice: Choice;
  version: number;
  /** A real-sized batch's per-row inputs holding unusable text: input id → the problem. */
  invalid: Map<string, string>;
  /** The list of sequences of a real-sized batch. */
  list: VirtualList | null;
  /** The sequence shown in detail (null: the top-mass one, chosen at the next recompute), and from which response token. */
  detail: { b: number | null; from: number };
  /** The selected configuration's last gradient and the mask it was computed on (the detail redraws from them). */
  last: { grad: Float64Array; mask: Uint8Array; masses: Float64Array; vmax: number } | null;
} = {
  base: builtinBase(),
  edits: { lengths: [], advantages: [], gap: 0 },
  choice: "alg:dr_grpo",
  version: 0,
  invalid: new Map(),
  list: null,
  detail: { b: null, from: 0 },
  last: null,
};

function dims(base: BaseBatch): { B: number; T: number } {
  return { B: base.mask.length, T: base.logprobs[0]?.length ?? 0 };
}

/** Whether the loaded batch is shown as a real-sized one (realSized.ts), as the HTML report decides. */
function realSized(): boolean {
  const { B, T } = dims(state.base);
  return isRealSized(B, T);
}

function flatMask(mask: Rows): Uint8Array {
  const T = mask[0]?.length ?? 0;
  const out = new Uint8Array(mask.length * T);
  mask.forEach((row, b) => {
    row.forEach((v, t) => {
      out[b * T + t] = v === 1 ? 1 : 0;
    });
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Rendering

/** The columns of the batch's editor; a real-sized batch's list adds each sequence's gradient mass. */
const EDITOR_COLUMNS = ["Sequence", "Length", "Advantage"] as const;

function editorHead(table: HTMLTableElement, columns: readonly string[]): void {
  const tr = el("tr");
  for (const c of columns) tr.append(el("th", { scope: "col" }, c));
  (table.tHead as HTMLTableSectionElement).replaceChildren(tr);
}

/** The per-row editor; rebuilt only when a new batch is loaded (so typing keeps focus). */
function renderEditor(): void {
  const large = realSized();
  editorHead(byId<HTMLTableElement>("batch-editor"), EDITOR_COLUMNS);
  editorHead(byId<HTMLTableElement>("sequence-table"), [...EDITOR_COLUMNS, "Gradient mass"]);
  byId("batch-editor").hidden = large;
  byId("batch-large").hidden = !large;
  byId("grad-details").hidden = large;
  byId("sequence-detail").hidden = !large;
  byId("heatmap-caption").textContent = HEATMAP_CAPTION[large ? "large" : "small"];
  // One editor's inputs in the document at a time (their ids are the same: length-b, advantage-b).
  if (large) {
    byId("batch-editor").querySelector("tbody")?.replaceChildren();
    renderLargeEditor();
    return;
  }
  state.list?.dispose();
  state.list = null;
  const { base, edits } = state;
  const T = base.logprobs[0]?.length ?? 0;
  const perSeq = isPerSequence(base.advantages);
  const body = byId("batch-editor").querySelector("tbody") as HTMLTableSectionElement;
  body.replaceChildren();
  base.mask.forEach((_, b) => {
    const tr = el("tr");
    tr.append(el("th", { scope: "row", id: `seq-${b}` }, `Sequence ${b}`));
    const len = el("input", {
      type: "number",
      id: `length-${b}`,
      "data-row": String(b),
      min: "0",
      max: String(T),
      step: "1",
      "aria-label": `Sequence ${b} length`,
    });
    len.value = String(edits.lengths[b]);
    const adv = el("input", {
      type: "number",
      id: `advantage-${b}`,
      "data-row": String(b),
      step: "0.1",
      "aria-label": `Sequence ${b} advantage`,
    });
    if (perSeq) adv.value = String(edits.advantages[b]);
    else {
      adv.disabled = true;
      adv.placeholder = "per-token (from file)";
    }
    const lenTd = el("td");
    lenTd.append(len, el("span", { class: "help" }, ` of ${T}`));
    const advTd = el("td");
    advTd.append(adv);
    tr.append(lenTd, advTd);
    body.append(tr);
  });
  byId<HTMLInputElement>("gap").value = String(edits.gap);
  byId("batch-source").textContent = `Batch: ${base.label}.`;
}

// ---------------------------------------------------------------------------------------------
// A real-sized batch: the summary, edits to every sequence, the virtualised list

/** Height of a row of the list of sequences, in CSS pixels (style.css's .vrow). */
const ROW_HEIGHT = 34;

/** The summary of the evaluated lengths and advantages (edits included). */
function renderSummary(): void {
  const { base, edits } = state;
  const { B, T } = dims(base);
  const L = spread(edits.lengths);
  const N = edits.lengths.reduce((a, x) => a + x, 0);
  const loaded = initialEdits(base);
  const edited = edits.lengths.filter(
    (x, b) => x !== loaded.lengths[b] || edits.advantages[b] !== loaded.advantages[b],
  ).length;
  const adv = isPerSequence(base.advantages)
    ? (() => {
        const a = spread(edits.advantages);
        return `advantages min ${fmt(a.min)}, median ${fmt(a.median)}, max ${fmt(a.max)}`;
      })()
    : "advantages per token, from the file (not editable)";
  byId("batch-summary").textContent =
    `${B} sequences of up to ${T} positions, ${N} response tokens: lengths min ${L.min}, median ${L.median}, max ${L.max}; ${adv}. ${edited === 0 ? "No sequence edited." : `${edited} sequence(s) edited.`}`;
}

function rowInput(b: number, kind: "length" | "advantage"): HTMLInputElement {
  const { T } = dims(state.base);
  const input = document.createElement("input");
  input.type = "number";
  input.id = `${kind}-${b}`;
  input.dataset.row = String(b);
  input.dataset.kind = kind;
  input.setAttribute("aria-label", `Sequence ${b} ${kind}`);
  if (kind === "length") {
    input.min = "0";
    input.max = String(T);
    input.step = "1";
  } else {
    input.step = "0.1";
    if (!isPerSequence(state.base.advantages)) {
      input.disabled = true;
      input.placeholder = "per-token";
    }
  }
  return input;
}

function makeRow(b: number): HTMLTableRowElement {
  const row = el("tr", { "aria-rowindex": String(b + 2), "data-row": String(b) });
  const cell = (child: HTMLElement | string, attrs: Record<string, string> = {}) => {
    const c = el("td", attrs);
    c.append(child);
    return c;
  };
  row.append(
    el("th", { scope: "row", id: `seq-${b}` }, `Sequence ${b}`),
    cell(rowInput(b, "length")),
    cell(rowInput(b, "advantage")),
    cell("", { "data-col": "mass" }),
  );
  refreshRow(b, row);
  return row;
}

/** A shown row's inputs from the edits (not the one being typed in) and its mass. */
function refreshRow(b: number, row: HTMLTableRowElement): void {
  for (const kind of ["length", "advantage"] as const) {
    const input = row.querySelector<HTMLInputElement>(`#${kind}-${b}`);
    if (input === null || input === document.activeElement) continue;
    const raw = state.invalid.get(input.id);
    const v = kind === "length" ? state.edits.lengths[b] : state.edits.advantages[b];
    input.value = raw ?? (v === undefined ? "" : String(v));
    input.setAttribute("aria-invalid", raw === undefined ? "false" : "true");
  }
  const mass = row.querySelector<HTMLElement>('[data-col="mass"]');
  const m = state.last?.masses[b];
  if (mass !== null) {
    mass.textContent = m === undefined ? "" : fmt(m);
    if (m !== undefined) mass.dataset.value = String(m);
  }
}

let recomputeTimer: ReturnType<typeof setTimeout> | null = null;

/** Recompute after the edits stop for a moment (a real-sized batch takes a while to evaluate). */
function scheduleRecompute(): void {
  if (recomputeTimer !== null) clearTimeout(recomputeTimer);
  recomputeTimer = setTimeout(() => {
    recomputeTimer = null;
    if (readControls()) recompute();
  }, 150);
}

/** An edit in the list: check the one value, keep it (or the problem), recompute. */
function onRowInput(input: HTMLInputElement): void {
  const b = Number(input.dataset.row);
  const { T } = dims(state.base);
  const text = input.value.trim();
  const v = text === "" ? Number.NaN : Number(text);
  const isLength = input.dataset.kind === "length";
  const ok = isLength ? Number.isInteger(v) && v >= 0 && v <= T : Number.isFinite(v);
  input.setAttribute("aria-invalid", ok ? "false" : "true");
  if (!ok) {
    state.invalid.set(
      input.id,
      `Sequence ${b} ${isLength ? `length must be an integer from 0 to ${T}` : "advantage must be a number"}`,
    );
  } else {
    state.invalid.delete(input.id);
    const target = isLength ? state.edits.lengths : state.edits.advantages;
    target[b] = v;
  }
  renderSummary();
  scheduleRecompute();
}

function renderLargeEditor(): void {
  const { B, T } = dims(state.base);
  byId<HTMLInputElement>("gap").value = String(state.edits.gap);
  byId("batch-source").textContent = `Batch: ${state.base.label}.`;
  byId<HTMLInputElement>("cap-length").max = String(T);
  byId<HTMLInputElement>("goto-sequence").max = String(B - 1);
  byId<HTMLInputElement>("detail-sequence").max = String(B - 1);
  const perSeq = isPerSequence(state.base.advantages);
  for (const id of ["scale-advantages", "shift-advantages", "apply-advantages"])
    byId<HTMLInputElement>(id).disabled = !perSeq;
  byId("bulk-error").textContent = "";
  renderSummary();
  const table = byId<HTMLTableElement>("sequence-table");
  table.setAttribute("aria-rowcount", String(B + 1));
  state.list?.dispose();
  state.list = new VirtualList(
    byId("sequence-list"),
    table.tBodies[0] as HTMLTableSectionElement,
    B,
    ROW_HEIGHT,
    makeRow,
    refreshRow,
  );
}

/** The number in an input, or a message naming it when it breaks `rule`. */
function bulkValue(id: string, ok: (v: number) => boolean, rule: string): number | string {
  const input = byId<HTMLInputElement>(id);
  const v = input.value.trim() === "" ? Number.NaN : Number(input.value);
  const good = ok(v);
  input.setAttribute("aria-invalid", good ? "false" : "true");
  return good ? v : `${input.labels?.[0]?.textContent ?? id} ${rule}`;
}

/** Apply an edit to every sequence (refused while a row holds an unusable value). */
function applyToAll(change: () => string | null): void {
  const box = byId("bulk-error");
  if (state.invalid.size > 0) {
    box.textContent = `Correct the marked sequences first: ${[...state.invalid.values()].join("; ")}`;
    return;
  }
  const problem = change();
  box.textContent = problem ?? "";
  if (problem !== null) return;
  state.list?.update();
  renderSummary();
  if (readControls()) recompute();
}

function wireLarge(): void {
  const box = byId("sequence-list");
  box.addEventListener("input", (e) => {
    const t = e.target;
    if (t instanceof HTMLInputElement && t.dataset.row !== undefined) onRowInput(t);
  });
  byId("apply-cap").addEventListener("click", () =>
    applyToAll(() => {
      const { T } = dims(state.base);
      const cap = bulkValue(
        "cap-length",
        (v) => Number.isInteger(v) && v >= 0 && v <= T,
        `must be an integer from 0 to ${T}`,
      );
      if (typeof cap === "string") return cap;
      state.edits.lengths = state.edits.lengths.map((L) => Math.min(L, cap));
      return null;
    }),
  );
  byId("apply-advantages").addEventListener("click", () =>
    applyToAll(() => {
      const k = bulkValue("scale-advantages", Number.isFinite, "must be a number");
      if (typeof k === "string") return k;
      const c = bulkValue("shift-advantages", Number.isFinite, "must be a number");
      if (typeof c === "string") return c;
      state.edits.advantages = state.edits.advantages.map((a) => a * k + c);
      return null;
    }),
  );
  byId("undo-edits").addEventListener("click", () => {
    state.invalid.clear();
    state.edits = initialEdits(state.base);
    byId<HTMLInputElement>("gap").value = "0";
    applyToAll(() => null);
  });
  byId("goto-sequence").addEventListener("change", () => {
    const { B } = dims(state.base);
    const b = bulkValue(
      "goto-sequence",
      (v) => Number.isInteger(v) && v >= 0 && v < B,
      `must be a sequence from 0 to ${B - 1}`,
    );
    byId("bulk-error").textContent = typeof b === "string" ? b : "";
    if (typeof b === "string") return;
    state.list?.scrollTo(b);
    document.getElementById(`length-${b}`)?.focus();
  });
  const onDetail = (): void => {
    const { B } = dims(state.base);
    const b = bulkValue(
      "detail-sequence",
      (v) => Number.isInteger(v) && v >= 0 && v < B,
      `must be a sequence from 0 to ${B - 1}`,
    );
    const from = bulkValue(
      "detail-from",
      (v) => Number.isInteger(v) && v >= 0,
      "must be an integer from 0",
    );
    const problems = [b, from].filter((x) => typeof x === "string");
    byId("detail-error").textContent = problems.join("; ");
    if (typeof b === "string" || typeof from === "string") return;
    state.detail = { b, from };
    renderDetail();
  };
  byId("detail-sequence").addEventListener("input", onDetail);
  byId("detail-from").addEventListener("input", onDetail);
}

/** Read every control into `state.edits`; false (and a message) when a value is not usable. */
function readControls(): boolean {
  const { base } = state;
  const T = base.logprobs[0]?.length ?? 0;
  const problems: string[] = [];
  const check = (input: HTMLInputElement, ok: (v: number) => boolean, rule: string): number => {
    const v = input.value.trim() === "" ? Number.NaN : Number(input.value);
    const good = ok(v);
    input.setAttribute("aria-invalid", good ? "false" : "true");
    if (!good) problems.push(`${input.getAttribute("aria-label") ?? input.id} ${rule}`);
    return v;
  };
  if (realSized()) {
    const gap = check(byId<HTMLInputElement>("gap"), Number.isFinite, "must be a number");
    problems.unshift(...state.invalid.values());
    byId("edit-error").textContent = problems.join("; ");
    if (problems.length > 0) return false;
    state.edits = { ...state.edits, gap };
    return true;
  }
  const lengths = base.mask.map((_, b) =>
    check(
      byId<HTMLInputElement>(`length-${b}`),
      (v) => Number.isInteger(v) && v >= 0 && v <= T,
      `must be an integer from 0 to ${T}`,
    ),
  );
  const advantages = isPerSequence(base.advantages)
    ? base.mask.map((_, b) =>
        check(byId<HTMLInputElement>(`advantage-${b}`), Number.isFinite, "must be a number"),
      )
    : [];
  const gap = check(byId<HTMLInputElement>("gap"), Number.isFinite, "must be a number");
  byId("edit-error").textContent = problems.join("; ");
  if (problems.length > 0) return false;
  state.edits = { lengths, advantages, gap };
  return true;
}

function renderWhich(report: WhichReport): void {
  const table = byId<HTMLTableElement>("which-table");
  const head = table.tHead as HTMLTableSectionElement;
  const body = table.tBodies[0] as HTMLTableSectionElement;
  const hr = el("tr");
  hr.append(
    el("th", { scope: "col" }, "Configuration"),
    el("th", { scope: "col" }, "Source"),
    el("th", { scope: "col" }, "Loss"),
  );
  for (let b = 0; b < report.batchSize; b++) {
    hr.append(el("th", { scope: "col" }, `Mass, seq ${b} (L = ${report.lengths[b]})`));
  }
  head.replaceChildren(hr);
  body.replaceChildren(
    ...report.rows.map((r, i) => {
      const tr = el("tr", { "data-row": String(i), "data-key": r.key });
      tr.append(
        el("th", { scope: "row", "data-row": String(i), "data-col": "label" }, r.label),
        el("td", { "data-row": String(i), "data-col": "source" }, r.source),
        numberCell(r.loss, { "data-row": String(i), "data-col": "loss" }),
      );
      r.gradMass.forEach((m, b) => {
        tr.append(numberCell(m, { "data-row": String(i), "data-col": `mass-${b}` }));
      });
      return tr;
    }),
  );
  table.dataset.rows = String(report.rows.length);
}

/** The per-token gradient heat map: |g| as viridis colour, the sign as a glyph, padding hatched. */
function renderHeatmap(grad: Float64Array, mask: Rows): void {
  const B = mask.length;
  const T = mask[0]?.length ?? 0;
  const cw = 46;
  const ch = 30;
  const left = 110;
  const top = 22;
  let max = 0;
  for (let i = 0; i < grad.length; i++) max = Math.max(max, Math.abs(grad[i] as number));
  const root = svg("svg", {
    width: left + T * cw + 2,
    height: top + B * ch + 2,
    role: "img",
    "aria-labelledby": "heatmap-caption heatmap-summary",
    id: "heatmap-svg",
  });
  const defs = svg("defs");
  const pattern = svg("pattern", {
    id: "hatch",
    patternUnits: "userSpaceOnUse",
    width: 6,
    height: 6,
    patternTransform: "rotate(45)",
  });
  pattern.append(
    svg("rect", { width: 6, height: 6, fill: "#d9d9d9" }),
    svg("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: "#8c8c8c", "stroke-width": 2 }),
  );
  defs.append(pattern);
  root.append(defs);
  for (let t = 0; t < T; t++) {
    const label = svg("text", { x: left + t * cw + cw / 2, y: 15, "text-anchor": "middle" });
    label.textContent = `t${t}`;
    root.append(label);
  }
  let peak = { b: 0, t: 0, v: 0 };
  for (let b = 0; b < B; b++) {
    const rowLabel = svg("text", { x: 4, y: top + b * ch + ch / 2 + 5 });
    rowLabel.textContent = `seq ${b} (L = ${countOnes(mask[b] as number[])})`;
    root.append(rowLabel);
    for (let t = 0; t < T; t++) {
      const g = grad[b * T + t] as number;
      const pad = mask[b]?.[t] !== 1;
      const u = max > 0 ? Math.abs(g) / max : 0;
      if (!pad && Math.abs(g) > Math.abs(peak.v)) peak = { b, t, v: g };
      const cell = svg("g", {
        "data-row": b,
        "data-t": t,
        "data-value": String(g),
        "data-padding": String(pad),
      });
      cell.append(
        svg("rect", {
          x: left + t * cw,
          y: top + b * ch,
          width: cw - 2,
          height: ch - 2,
          fill: pad ? "url(#hatch)" : viridis(u),
        }),
      );
      const title = svg("title");
      title.textContent = pad
        ? `sequence ${b}, token ${t}: padding (gradient ${fmt(g)})`
        : `sequence ${b}, token ${t}: gradient ${fmt(g)}`;
      cell.append(title);
      if (!pad && g !== 0) {
        const sign = svg("text", {
          x: left + t * cw + cw / 2 - 1,
          y: top + b * ch + ch / 2 + 5,
          "text-anchor": "middle",
          fill: u > 0.55 ? "#000" : "#fff",
          "aria-hidden": "true",
        });
        sign.textContent = g > 0 ? "+" : "−";
        cell.append(sign);
      }
      root.append(cell);
    }
  }
  const summary = el(
    "p",
    { id: "heatmap-summary", class: "help" },
    max === 0
      ? "Every gradient is 0."
      : `Largest |gradient| ${fmt(Math.abs(peak.v))} (sign ${peak.v > 0 ? "+" : "−"}) at sequence ${peak.b}, token ${peak.t}; colour runs from 0 (dark purple) to ${fmt(max)} (yellow).`,
  );
  byId("heatmap").replaceChildren(root, summary);
  renderLegend(max);
  renderGradTable(grad, mask);
}

function renderLegend(max: number): void {
  const w = 220;
  const legend = svg("svg", { width: w + 150, height: 44, "aria-hidden": "true" });
  const defs = svg("defs");
  const lg = svg("linearGradient", { id: "viridis-ramp" });
  for (let k = 0; k <= 16; k++) {
    lg.append(svg("stop", { offset: `${(k / 16) * 100}%`, "stop-color": viridis(k / 16) }));
  }
  defs.append(lg);
  legend.append(
    defs,
    svg("rect", { x: 0, y: 4, width: w, height: 14, fill: "url(#viridis-ramp)" }),
  );
  const lo = svg("text", { x: 0, y: 36 });
  lo.textContent = "|g| = 0";
  const hi = svg("text", { x: w, y: 36, "text-anchor": "end" });
  hi.textContent = fmt(max);
  legend.append(
    lo,
    hi,
    svg("rect", { x: w + 16, y: 4, width: 22, height: 14, fill: "url(#hatch)" }),
  );
  const padText = svg("text", { x: w + 44, y: 16 });
  padText.textContent = "padding";
  legend.append(padText);
  byId("legend").replaceChildren(
    legend,
    el(
      "p",
      { class: "help" },
      `Legend: colour is |∂loss/∂logprobs| from 0 to ${fmt(max)} (viridis); + and − mark the sign; hatched grey cells are padding.`,
    ),
  );
}

/** The text alternative of the heat map: every gradient value in a data table. */
function renderGradTable(grad: Float64Array, mask: Rows): void {
  const T = mask[0]?.length ?? 0;
  const table = byId<HTMLTableElement>("grad-table");
  const head = el("tr");
  head.append(el("th", { scope: "col" }, "Sequence"));
  for (let t = 0; t < T; t++) head.append(el("th", { scope: "col" }, `t${t}`));
  const thead = el("thead");
  thead.append(head);
  const tbody = el("tbody");
  mask.forEach((row, b) => {
    const tr = el("tr");
    tr.append(el("th", { scope: "row" }, `seq ${b}`));
    row.forEach((m, t) => {
      const g = grad[b * T + t] as number;
      const attrs = { "data-row": String(b), "data-t": String(t) };
      tr.append(m === 1 ? numberCell(g, attrs) : el("td", { ...attrs, class: "pad" }, "padding"));
    });
    tbody.append(tr);
  });
  table.replaceChildren(thead, tbody);
}

/** Per-sequence mass Σ_t |g[b, t]|, computed as the which table computes it (its massOf). */
function massesOf(grad: Float64Array, B: number, T: number): Float64Array {
  return massOf("playground", state.choice, grad, B, T);
}

/** Per-sequence mass Σ_t |g[b, t]| (the which table's definition) as horizontal bars. */
function renderMassBars(grad: Float64Array, B: number, T: number): void {
  const masses = Array.from(massesOf(grad, B, T));
  const max = Math.max(0, ...masses);
  const list = el("ul", { class: "bars", id: "mass-list" });
  masses.forEach((m, b) => {
    const li = el("li", { "data-row": String(b), "data-value": String(m) });
    const bar = el("span", { class: "bar", "aria-hidden": "true" });
    bar.style.width = `${max > 0 ? (m / max) * 100 : 0}%`;
    bar.style.background = viridis(0.35);
    const track = el("span", { class: "track" });
    track.append(bar);
    li.append(el("span", { class: "bar-label" }, `seq ${b}`), track, el("span", {}, fmt(m)));
    list.append(li);
  });
  byId("mass-bars").replaceChildren(list);
}

/** The heat map's caption: the SVG of a small batch, the raster of a real-sized one. */
const HEATMAP_CAPTION = {
  small:
    "Per-token gradient |∂loss/∂logprobs[b, t]| (colour, viridis), its sign (+ or −), and padding (grey, hatched).",
  large:
    "Per-token gradient ∂loss/∂logprobs[b, t]: rows are sequences, columns positions; purple negative, orange positive, grey padding (the HTML report's raster).",
} as const;

/** A real-sized batch's picture, top masses, list masses and chosen sequence. */
function renderLarge(grad: Float64Array, mask: Rows, B: number, T: number): void {
  const flat = flatMask(mask);
  const masses = massesOf(grad, B, T);
  const vmax = renderRaster(byId("heatmap"), byId("legend"), grad, flat, B, T, fmt);
  state.last = { grad, mask: flat, masses, vmax };
  renderTopMass(byId("mass-bars"), masses, state.edits.lengths, fmt, viridis(0.35));
  if (state.detail.b === null || state.detail.b >= B) {
    let top = 0;
    for (let b = 1; b < B; b++) if ((masses[b] as number) > (masses[top] as number)) top = b;
    state.detail = { b: top, from: 0 };
    byId<HTMLInputElement>("detail-sequence").value = String(top);
    byId<HTMLInputElement>("detail-from").value = "0";
  }
  renderDetail();
  state.list?.update();
}

function renderDetail(): void {
  const last = state.last;
  const b = state.detail.b;
  if (last === null || b === null) return;
  const { T } = dims(state.base);
  renderSequenceDetail(
    {
      strip: byId("detail-strip"),
      summary: byId("detail-summary"),
      table: byId<HTMLTableElement>("detail-table"),
    },
    last.grad,
    last.mask,
    T,
    b,
    state.detail.from,
    last.masses[b] as number,
    last.vmax,
    fmt,
  );
}

function clearSelected(): void {
  byId("selected-loss").textContent = "—";
  byId("selected-loss").removeAttribute("data-value");
  byId("heatmap").replaceChildren();
  byId("legend").replaceChildren();
  byId("grad-table").replaceChildren();
  byId("mass-bars").replaceChildren();
  byId("detail-strip").replaceChildren();
  byId("detail-table").replaceChildren();
  byId("detail-summary").textContent = "";
  state.last = null;
}

/** Recompute everything from the current state. */
function recompute(): void {
  const batch = applyEdits(state.base, state.edits);
  const mask = batch.responseMask as Rows;
  const B = mask.length;
  const T = mask[0]?.length ?? 0;
  const large = realSized();
  try {
    const report = whichTable(batch);
    if (large) renderWhichSummary(byId<HTMLTableElement>("which-table"), report, fmt);
    else renderWhich(report);
    byId("which-error").textContent = "";
  } catch (e) {
    byId("which-table").querySelector("tbody")?.replaceChildren();
    byId("which-error").textContent = errorText(e);
  }
  try {
    const r = evaluateChoice(state.choice, batch, T);
    const out = byId("selected-loss");
    out.textContent = fmt(r.loss);
    out.dataset.value = String(r.loss);
    byId("config-note").textContent = r.note;
    byId("config-error").textContent = "";
    if (large) renderLarge(r.grad, mask, B, T);
    else {
      renderHeatmap(r.grad, mask);
      renderMassBars(r.grad, B, T);
    }
  } catch (e) {
    clearSelected();
    byId("config-note").textContent = "";
    byId("config-error").textContent = errorText(e);
  }
  state.version++;
  document.body.dataset.version = String(state.version);
}

// ---------------------------------------------------------------------------------------------
// Wiring

function renderConfigSelect(): void {
  const select = byId<HTMLSelectElement>("config");
  const algs = el("optgroup", { label: "Registry algorithms (policyLoss)" });
  for (const n of ALGORITHM_NAMES) algs.append(el("option", { value: `alg:${n}` }, n));
  const fws = el("optgroup", { label: "Framework models (evaluate)" });
  for (const id of FRAMEWORK_MODEL_IDS) {
    const needs = getFrameworkModel(id).needs;
    const text = needs.length > 0 ? `${id} (needs ${needs.join(", ")})` : id;
    fws.append(el("option", { value: `fw:${id}` }, text));
  }
  select.replaceChildren(algs, fws);
  select.value = state.choice;
  select.addEventListener("change", () => {
    state.choice = select.value;
    recompute();
  });
}

function loadBase(base: BaseBatch): void {
  state.base = base;
  state.edits = initialEdits(base);
  state.invalid.clear();
  state.detail = { b: null, from: 0 };
  state.last = null;
  renderEditor();
  readControls();
  recompute();
}

/** Parse a picked or dropped file in the page (nothing is uploaded) and make it the batch. */
async function loadFile(file: File): Promise<void> {
  await loadBytes(new Uint8Array(await file.arrayBuffer()), file.name);
}

/** Parse a batch file's bytes in the page and make it the batch. */
async function loadBytes(bytes: Uint8Array, name: string): Promise<void> {
  const file = { name };
  const errorBox = byId("file-error");
  try {
    const set = readTensorsFromBytes(bytes, file.name);
    const batch = toBatch(set);
    const [B, T] = [batch.logprobs.rows, batch.logprobs.cols];
    errorBox.textContent = "";
    loadBase(baseFrom(batch, `${file.name} (${set.format}, B = ${B}, T = ${T})`));
  } catch (e) {
    errorBox.textContent = `Could not read ${file.name}: ${errorText(e)}`;
    state.version++;
    document.body.dataset.version = String(state.version);
  }
}

function wire(): void {
  const onEdit = (): void => {
    if (readControls()) recompute();
  };
  byId("batch-editor").addEventListener("input", onEdit);
  byId("gap").addEventListener("input", () => {
    if (realSized()) scheduleRecompute();
    else onEdit();
  });
  wireLarge();
  const fileInput = byId<HTMLInputElement>("file");
  fileInput.addEventListener("change", () => {
    const f = fileInput.files?.[0];
    if (f !== undefined) void loadFile(f);
  });
  const drop = byId("drop");
  drop.addEventListener("dragover", (e) => {
    e.preventDefault();
    drop.classList.add("over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    const f = e.dataTransfer?.files[0];
    if (f !== undefined) void loadFile(f);
  });
  byId("reset").addEventListener("click", () => {
    byId("file-error").textContent = "";
    fileInput.value = "";
    loadBase(builtinBase());
  });
}

/**
 * `polgrad playground BATCH` serves the batch beside the page at `./batch` (its file name in the
 * `x-polgrad-batch-name` header): load it. A static host has no such path (404): the built-in
 * batch stays.
 */
async function loadServedBatch(): Promise<void> {
  let res: Response;
  try {
    res = await fetch("./batch");
  } catch {
    return;
  }
  if (!res.ok) return;
  const name = res.headers.get("x-polgrad-batch-name") ?? "batch";
  await loadBytes(new Uint8Array(await res.arrayBuffer()), name);
}

renderConfigSelect();
wire();
loadBase(state.base);
void loadServedBatch();
