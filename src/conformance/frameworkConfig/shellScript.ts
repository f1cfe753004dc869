/**
 * A launch script as the frameworks ship it (`run_qwen3-8b.sh`, `train_ppo_ray_hybrid_engine.sh`),
 * read for the trainer's command line without running anything: the script's commands in order,
 * its variable assignments applied as bash applies them, the trainer's words expanded as bash
 * expands them (docs/conformance/explain.md#launch-scripts). What cannot be known without running
 * the script is refused by line, never guessed: a trainer word that depends on a branch (`if`,
 * `case`, a loop), two trainer commands, an expansion this reader does not model.
 * Browser-safe: no `node:` import.
 */
import { safeText } from "../../core/message.js";
import { ConfigError } from "../../errors.js";

const FN = "readLaunchScript";

/** One piece of a word: literal text, or an expansion. */
type Segment =
  | { readonly kind: "lit"; readonly text: string; readonly quoted: boolean }
  | {
      readonly kind: "param";
      /** The text inside `${…}` (or the bare name of `$NAME`). */
      readonly body: string;
      readonly quoted: boolean;
    }
  | { readonly kind: "cmdsub"; readonly text: string; readonly quoted: boolean }
  | { readonly kind: "arith"; readonly expr: string; readonly quoted: boolean };

type Word = readonly Segment[];

/** A word, or an array literal `(w1 w2 …)` (only as an assignment's value). */
type RawWord =
  | { readonly kind: "word"; readonly segs: Word }
  | {
      readonly kind: "array";
      readonly prefix: Word;
      readonly items: readonly Word[];
    };

interface RawCommand {
  readonly line: number;
  readonly words: readonly RawWord[];
}

const CONTROL_OPEN = new Set(["if", "case", "for", "while", "until", "select"]);
const CONTROL_CLOSE = new Set(["fi", "esac", "done"]);

function bad(source: string, line: number, what: string): never {
  throw new ConfigError(
    FN,
    "text",
    `${FN}: ${safeText(source)} line ${line}: ${what}; give the trainer's command line instead (run the script with bash -x to see it)`,
  );
}

/** The index of the `}` closing a `${` whose body starts at `i` (nested `${…}` and quotes skipped), or −1. */
function braceEnd(text: string, i: number): number {
  let depth = 1;
  let quote: string | null = null;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (c === "\\") {
      j++;
      continue;
    }
    if (quote !== null) {
      if (c === quote) quote = null;
      else if (quote === '"' && c === "$" && text[j + 1] === "{") {
        const k = braceEnd(text, j + 2);
        if (k < 0) return -1;
        j = k;
      }
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === "$" && text[j + 1] === "{") {
      depth++;
      j++;
    } else if (c === "}" && --depth === 0) return j;
  }
  return -1;
}

/** Split a script into commands of raw words (quotes, comments, continuations, arrays). */
function lex(text: string, source: string): RawCommand[] {
  const cmds: RawCommand[] = [];
  let words: RawWord[] = [];
  let segs: Segment[] = [];
  let lit = "";
  let litQuoted = false;
  let inWord = false;
  let line = 1;
  let cmdLine = 1;
  let array: { prefix: Word; items: Word[] } | null = null;
  const flushLit = () => {
    if (lit !== "") segs.push({ kind: "lit", text: lit, quoted: litQuoted });
    lit = "";
    litQuoted = false;
  };
  const endWord = () => {
    flushLit();
    if (inWord) {
      if (array !== null) array.items.push(segs);
      else words.push({ kind: "word", segs });
    }
    segs = [];
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (array !== null) return;
    if (words.length > 0) cmds.push({ line: cmdLine, words });
    words = [];
  };
  /** The text of a balanced `$(…)` or `$((…))` starting at `i` (after the `$(`), and where it ends. */
  const balanced = (i: number): [string, number] => {
    let depth = 1;
    let j = i;
    while (j < text.length && depth > 0) {
      const c = text[j];
      if (c === "(") depth++;
      else if (c === ")") depth--;
      else if (c === "\n") line++;
      j++;
    }
    if (depth > 0) bad(source, line, "an unterminated $( … )");
    return [text.slice(i, j - 1), j];
  };
  /** A `$…` expansion at `i` (the `$`), pushed as a segment; returns the index after it. */
  const dollar = (i: number, quoted: boolean): number => {
    const n = text[i + 1];
    if (n === "(" && text[i + 2] === "(") {
      const [inner, j] = balanced(i + 3);
      if (text[j] !== ")") bad(source, line, "an unterminated $(( … ))");
      flushLit();
      segs.push({ kind: "arith", expr: inner.slice(0, inner.length), quoted });
      return j + 1;
    }
    if (n === "(") {
      const [inner, j] = balanced(i + 2);
      flushLit();
      segs.push({ kind: "cmdsub", text: inner, quoted });
      return j;
    }
    if (n === "{") {
      const close = braceEnd(text, i + 2);
      if (close < 0) bad(source, line, "an unterminated ${ … }");
      flushLit();
      segs.push({ kind: "param", body: text.slice(i + 2, close), quoted });
      return close + 1;
    }
    const m = /^([A-Za-z_]\w*|[0-9@*#?$!-])/.exec(text.slice(i + 1, i + 130));
    if (m === null) {
      lit += "$";
      return i + 1;
    }
    flushLit();
    segs.push({ kind: "param", body: m[1] as string, quoted });
    return i + 1 + (m[1] as string).length;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === "\\" && text[i + 1] === "\n") {
      i += 2;
      line++;
      continue;
    }
    if (c === "\\") {
      lit += text[i + 1] ?? "";
      inWord = true;
      i += 2;
      continue;
    }
    if (c === "'") {
      const close = text.indexOf("'", i + 1);
      if (close < 0) bad(source, line, "an unterminated ' quote");
      const body = text.slice(i + 1, close);
      flushLit();
      segs.push({ kind: "lit", text: body, quoted: true });
      line += body.split("\n").length - 1;
      inWord = true;
      i = close + 1;
      continue;
    }
    if (c === '"') {
      flushLit();
      inWord = true;
      const before = segs.length;
      let j = i + 1;
      litQuoted = true;
      while (j < text.length && text[j] !== '"') {
        const d = text[j] as string;
        if (d === "\\" && j + 1 < text.length && '$`"\\\n'.includes(text[j + 1] as string)) {
          if (text[j + 1] !== "\n") lit += text[j + 1];
          else line++;
          j += 2;
          continue;
        }
        if (d === "$") {
          j = dollar(j, true);
          litQuoted = true;
          continue;
        }
        if (d === "`") bad(source, line, "a `command` substitution");
        if (d === "\n") line++;
        lit += d;
        j++;
      }
      if (j >= text.length) bad(source, line, 'an unterminated " quote');
      flushLit();
      // "" is an empty word; "${A[@]}" of an empty array is no word at all.
      if (segs.length === before) segs.push({ kind: "lit", text: "", quoted: true });
      litQuoted = false;
      i = j + 1;
      continue;
    }
    if (c === "$") {
      inWord = true;
      i = dollar(i, false);
      continue;
    }
    if (c === "`") bad(source, line, "a `command` substitution");
    if (c === "#" && !inWord) {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    if (c === "(" && inWord && array === null && segs.length === 0 && /=$|\+=$/.test(lit)) {
      // NAME=( … ): an array literal, its items until the matching `)`.
      flushLit();
      array = { prefix: segs, items: [] };
      segs = [];
      inWord = false;
      i++;
      continue;
    }
    if (c === ")" && array !== null) {
      endWord();
      words.push({ kind: "array", prefix: array.prefix, items: array.items });
      array = null;
      i++;
      continue;
    }
    if (c === " " || c === "\t" || c === "\r") {
      endWord();
      i++;
      continue;
    }
    if (c === "\n") {
      endCommand();
      line++;
      i++;
      if (array === null) cmdLine = line;
      continue;
    }
    if (c === ";" || c === "&" || c === "|") {
      endCommand();
      while (text[i] === c || text[i] === ";") i++;
      if (array === null) cmdLine = line;
      continue;
    }
    if (c === "<" && text[i + 1] === "<" && text[i + 2] !== "<") {
      // A here-document: its body, up to the delimiter's line, is the command's input, not commands.
      endWord();
      const m = /^<<-?\s*['"]?(\w+)['"]?/.exec(text.slice(i));
      if (m === null) bad(source, line, "a here-document this reader does not model");
      const nl = text.indexOf("\n", i);
      const end = nl < 0 ? -1 : text.slice(nl + 1).search(new RegExp(`^\\s*${m[1]}\\s*$`, "m"));
      if (end < 0) bad(source, line, `a here-document without its ${m[1]} line`);
      const body = text.slice(nl + 1, nl + 1 + end);
      line += body.split("\n").length - 1;
      i = nl + 1 + end + (text.slice(nl + 1 + end).indexOf("\n") >>> 0);
      endCommand();
      continue;
    }
    if (c === ">" || c === "<") {
      // A redirection: the operator, its file descriptor (`2>&1`) and its target are not words.
      if (segs.length === 0 && /^\d+$/.test(lit)) {
        lit = "";
        inWord = false;
      }
      endWord();
      i++;
      while (text[i] === ">" || text[i] === "&") i++;
      while (text[i] === " ") i++;
      while (i < text.length && !" \t\n;|&".includes(text[i] as string)) i++;
      continue;
    }
    if (!inWord) cmdLine = words.length === 0 && array === null ? line : cmdLine;
    lit += c;
    inWord = true;
    i++;
  }
  if (array !== null) bad(source, line, "an unterminated ( … ) array");
  endCommand();
  return cmds;
}

/** The shell's variables as the script sets them: scalars and arrays, and where each was set. */
interface Vars {
  readonly scalars: Map<string, string>;
  readonly arrays: Map<string, string[]>;
  /** The line of an assignment made inside a branch or loop, by variable. */
  readonly conditional: Map<string, number>;
}

function arith(expr: string, vars: Vars, source: string, line: number): number {
  const src = expr.replace(/\$\{?([A-Za-z_]\w*)\}?/g, "$1");
  let k = 0;
  const peek = () => {
    while (src[k] === " " || src[k] === "\t" || src[k] === "\n") k++;
    return src[k];
  };
  const atom = (): number => {
    const c = peek();
    if (c === "(") {
      k++;
      const v = sum();
      if (peek() !== ")") bad(source, line, `an arithmetic expression $(( ${expr} ))`);
      k++;
      return v;
    }
    if (c === "-") {
      k++;
      return -atom();
    }
    const m = /^(\d+|[A-Za-z_]\w*)/.exec(src.slice(k));
    if (m === null) bad(source, line, `an arithmetic expression $(( ${expr} ))`);
    k += (m[1] as string).length;
    if (/^\d/.test(m[1] as string)) return Number(m[1]);
    const v = vars.scalars.get(m[1] as string) ?? "0";
    const n = Number(v === "" ? "0" : v);
    if (!Number.isInteger(n))
      bad(source, line, `$(( ${expr} )) reads ${m[1]} = ${JSON.stringify(v)}`);
    return n;
  };
  const product = (): number => {
    let v = atom();
    for (;;) {
      const c = peek();
      if (c !== "*" && c !== "/" && c !== "%") return v;
      k++;
      const w = atom();
      if (c !== "*" && w === 0) bad(source, line, `$(( ${expr} )) divides by 0`);
      v = c === "*" ? v * w : c === "/" ? Math.trunc(v / w) : v % w;
    }
  };
  const sum = (): number => {
    let v = product();
    for (;;) {
      const c = peek();
      if (c !== "+" && c !== "-") return v;
      k++;
      const w = product();
      v = c === "+" ? v + w : v - w;
    }
  };
  const v = sum();
  if (peek() !== undefined) bad(source, line, `an arithmetic expression $(( ${expr} ))`);
  return v;
}

interface Expander {
  readonly vars: Vars;
  readonly source: string;
  readonly line: number;
  /** Variables read by the expansion, for the branch check. */
  readonly read: Set<string>;
}

/** The value of `${body}` as one string, or the elements of `${NAME[@]}`. */
function param(body: string, x: Expander): string | string[] {
  const { vars } = x;
  const arr = /^([A-Za-z_]\w*)\[[@*]\]$/.exec(body);
  if (arr !== null) {
    x.read.add(arr[1] as string);
    return vars.arrays.get(arr[1] as string) ?? [];
  }
  // The script runs without arguments: "$@" is no word at all, $1… are unset, $# is 0.
  if (/^[@*]$/.test(body)) return [];
  if (body === "#") return "0";
  const m = /^([A-Za-z_]\w*|[0-9]+)(?:(:?[-=+])(.*))?$/s.exec(body);
  if (m === null) bad(x.source, x.line, `an expansion \${${body}} this reader does not model`);
  const name = m[1] as string;
  x.read.add(name);
  const set = vars.scalars.has(name) || vars.arrays.has(name);
  const raw = vars.scalars.get(name) ?? vars.arrays.get(name)?.[0] ?? "";
  const op = m[2];
  if (op === undefined) return raw;
  const empty = op.startsWith(":") ? !set || raw === "" : !set;
  const arg = expandString(m[3] as string, x);
  if (op.endsWith("+")) return empty ? "" : arg;
  if (!empty) return raw;
  if (op.endsWith("=")) vars.scalars.set(name, arg);
  return arg;
}

/** Expand a default's text (`${X:-$Y/z}`) to one string. */
function expandString(text: string, x: Expander): string {
  const cmds = lex(`_ ${text}`, x.source);
  const w = cmds[0]?.words[1];
  if (w === undefined || w.kind !== "word") return "";
  return expandWord(w.segs, x).join(" ");
}

/** Expand a word to fields: quoted parts stay whole, unquoted expansions split on whitespace. */
function expandWord(segs: Word, x: Expander): string[] {
  const fields: string[] = [];
  let cur = "";
  let has = false;
  const push = (s: string, quoted: boolean) => {
    if (quoted) {
      cur += s;
      has = true;
      return;
    }
    const parts = s.split(/[ \t\n]+/);
    parts.forEach((p, k) => {
      if (k > 0 && (has || cur !== "")) {
        fields.push(cur);
        cur = "";
        has = false;
      }
      if (p !== "") {
        cur += p;
        has = true;
      }
    });
  };
  for (const s of segs) {
    // A literal is never split: the lexer already split unquoted text at whitespace.
    if (s.kind === "lit") push(s.text, true);
    else if (s.kind === "arith") push(String(arith(s.expr, x.vars, x.source, x.line)), true);
    else if (s.kind === "cmdsub")
      // Nothing is run: `$(pwd)` is the working folder, any other command prints nothing.
      push(s.text.trim() === "pwd" ? "." : "", s.quoted);
    else {
      const v = param(s.body, x);
      if (typeof v === "string") push(v, s.quoted);
      else if (s.quoted) {
        // "${A[@]}": one field per element.
        v.forEach((e, k) => {
          if (k > 0) {
            fields.push(cur);
            cur = "";
          }
          cur += e;
          has = true;
        });
      } else for (const e of v) push(` ${e} `, false);
    }
  }
  if (has || cur !== "") fields.push(cur);
  return fields;
}

/**
 * Apply an assignment word (`X=…`, `X+=…`, `X=( … )`, `X+=( … )`), or return false when the word
 * is not one. The variable is certain when assigned outside any branch from nothing a branch set
 * (a certain assignment makes it certain again), else conditional from the line that decided it.
 */
function assign(
  w: RawWord,
  o: {
    readonly vars: Vars;
    readonly source: string;
    readonly line: number;
    readonly depth: number;
  },
): boolean {
  const { vars } = o;
  const xa: Expander = { vars, source: o.source, line: o.line, read: new Set() };
  let name: string;
  if (w.kind === "array") {
    const pre = w.prefix.map((s) => (s.kind === "lit" ? s.text : "")).join("");
    const m = /^([A-Za-z_]\w*)(\+?)=$/.exec(pre);
    if (m === null) bad(o.source, o.line, "an array this reader does not model");
    name = m[1] as string;
    const items = w.items.flatMap((it) => expandWord(it, xa));
    if (m[2] === "+") xa.read.add(name);
    vars.arrays.set(name, m[2] === "+" ? [...(vars.arrays.get(name) ?? []), ...items] : items);
    vars.scalars.delete(name);
  } else {
    const s0 = w.segs[0];
    const m = s0?.kind === "lit" && !s0.quoted ? /^([A-Za-z_]\w*)(\+?)=/.exec(s0.text) : null;
    if (m === null || s0?.kind !== "lit") return false;
    name = m[1] as string;
    const rest: Segment[] = [{ ...s0, text: s0.text.slice(m[0].length) }, ...w.segs.slice(1)];
    // An assignment's value is not split into fields.
    const value = expandWord(
      rest.map((s) => (s.kind === "lit" ? s : { ...s, quoted: true })),
      xa,
    ).join("");
    if (m[2] === "+") xa.read.add(name);
    vars.scalars.set(name, m[2] === "+" ? (vars.scalars.get(name) ?? "") + value : value);
    vars.arrays.delete(name);
  }
  const from = [...xa.read].map((n) => vars.conditional.get(n)).find((l) => l !== undefined);
  if (o.depth === 0 && from === undefined) vars.conditional.delete(name);
  else vars.conditional.set(name, o.depth > 0 ? o.line : (from as number));
  return true;
}

/** The literal text of a word without expansions, or "" (also for an array or no word). */
function wordText(w: RawWord | undefined): string {
  if (w === undefined || w.kind !== "word") return "";
  return w.segs.every((s) => s.kind === "lit")
    ? w.segs.map((s) => (s as { text: string }).text).join("")
    : "";
}

/** A word that opens a branch's commands: `then`, `else`, `do`, `{`, or a case pattern `npu)`. */
function isBranchWord(w: RawWord): boolean {
  const t = wordText(w);
  return (
    t === "then" || t === "else" || t === "do" || t === "{" || (t.endsWith(")") && !t.includes("("))
  );
}

/** The trainer launch a script holds: its line and its words, expanded. */
export interface ScriptLaunch {
  readonly line: number;
  readonly words: readonly string[];
}

/**
 * Read a launch script for its trainer commands: every command run in order, assignments
 * (`X=…`, `export X=…`, `X=( … )`, `X+=( … )`, `${X:=…}`) applied, and each command whose words
 * satisfy `isLaunch` returned with its words expanded as bash expands them (variables, defaults,
 * arrays, arithmetic, quotes; `$(…)` prints nothing, `$(pwd)` is `.`, `$@` is empty).
 *
 * @param text - The script.
 * @param source - Its name, for messages.
 * @param isLaunch - Whether expanded words are a trainer launch.
 * @returns The launches, in order.
 * @throws {ConfigError} E_CONFIG naming the line: a launch whose words read a variable assigned
 *   inside a branch or loop, an expansion this reader does not model, unbalanced quoting.
 * @derivation docs/conformance/explain.md#launch-scripts
 * @enforcedBy test/conformance/frameworkConfig/shellScript.test.ts > readLaunchScript > golden: a script as shipped gives the words bash gives
 * @since 0.2.0
 */
export function readLaunchScript(
  text: string,
  source: string,
  isLaunch: (words: readonly string[]) => boolean,
): ScriptLaunch[] {
  const vars: Vars = { scalars: new Map(), arrays: new Map(), conditional: new Map() };
  vars.scalars.set("HOME", "~");
  vars.scalars.set("PWD", ".");
  const out: ScriptLaunch[] = [];
  let depth = 0;
  for (const cmd of lex(text, source)) {
    const head = wordText(cmd.words[0]);
    if (CONTROL_OPEN.has(head)) depth++;
    if (CONTROL_CLOSE.has(head)) depth = Math.max(0, depth - 1);
    if (/^\w+\(\)$/.test(head) || head === "function") depth++;
    if (head === "}" && depth > 0) depth--;
    const x: Expander = { vars, source, line: cmd.line, read: new Set() };
    // Inside a branch, the words before a command are `then`, `else`, `do` or a case pattern `npu)`.
    let k = 0;
    if (depth > 0) while (k < cmd.words.length && isBranchWord(cmd.words[k] as RawWord)) k++;
    // Leading assignments (`export`, `local`, `declare` and `readonly` assign too).
    const lead = wordText(cmd.words[k]);
    if (lead === "export" || lead === "local" || lead === "declare" || lead === "readonly") k++;
    const start = k;
    for (; k < cmd.words.length; k++) {
      const got = assign(cmd.words[k] as RawWord, { vars, source, line: cmd.line, depth });
      if (!got) break;
    }
    const rest = cmd.words.slice(k);
    if (rest.length === 0 || (k > start && lead === "export")) continue;
    const words = rest.flatMap((w) => (w.kind === "word" ? expandWord(w.segs, x) : []));
    if (!isLaunch(words)) continue;
    for (const n of x.read) {
      const at = vars.conditional.get(n);
      if (at !== undefined)
        bad(
          source,
          cmd.line,
          `the trainer's command reads ${n}, which line ${at} sets inside a branch or loop (which branch runs is not known without running the script)`,
        );
    }
    out.push({ line: cmd.line, words });
  }
  return out;
}
