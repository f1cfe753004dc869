/**
 * The playground page (issue 16, docs/playground.md): Vite builds web/ into a temporary folder, a
 * small node:http server serves it, and headless Chromium drives it. The rendered which table,
 * the edited batch, a registry algorithm, a framework model and a loaded JSON file are each
 * compared with the library computing the same thing in Node. Skipped, with the reason printed,
 * when no Chromium is installed.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { torchSaveNpzDir } from "../../bench/torchSave.mjs";
import {
  ALGORITHMS,
  BUILTIN_BATCH,
  getFrameworkModel,
  type PolicyLossInputs,
  policyLoss,
  readTensorsFromBytes,
  toBatch,
  whichTable,
} from "../../src/browser.js";
import { spread, topIndices } from "../../src/report/sequenceSummary.js";
import { chromiumPath, launchChromium, screenshotPath } from "./_chromium.js";

const FILE = "test/browser/playground.test.ts";
const root = fileURLToPath(new URL("../../", import.meta.url));
const available = chromiumPath() !== null;
// Prints why the tests are skipped (launchChromium returns null without launching anything).
if (!available) await launchChromium(FILE);

const MIME: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

/** A static server of `dir` on a free port; 404 outside it. */
function serve(dir: string): Promise<Server> {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    const file = normalize(join(dir, path === "/" ? "index.html" : path));
    try {
      if (!file.startsWith(dir)) throw new Error("outside");
      const body = readFileSync(file);
      res.writeHead(200, { "content-type": MIME[extname(file)] ?? "application/octet-stream" });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

interface RenderedRow {
  key: string;
  loss: number;
  mass: number[];
}

async function renderedTable(page: Page): Promise<RenderedRow[]> {
  return page.$$eval("#which-table tbody tr", (trs) =>
    trs.map((tr) => {
      const cell = (col: string) =>
        Number(tr.querySelector(`[data-col="${col}"]`)?.getAttribute("data-value"));
      const masses = tr.querySelectorAll('[data-col^="mass-"]');
      return {
        key: tr.getAttribute("data-key") as string,
        loss: cell("loss"),
        mass: Array.from(masses, (_, b) => cell(`mass-${b}`)),
      };
    }),
  );
}

/** Equal, or within 1e-12 relative (Chromium's V8 and Node's evaluate the same code). */
function close(actual: number, expected: number): boolean {
  return (
    actual === expected ||
    Math.abs(actual - expected) <= 1e-12 * Math.max(Math.abs(actual), Math.abs(expected))
  );
}

function expectTableOf(rendered: RenderedRow[], batch: PolicyLossInputs): void {
  const want = whichTable(batch).rows;
  expect(rendered.map((r) => r.key)).toEqual(want.map((r) => r.key));
  rendered.forEach((r, i) => {
    const w = want[i]!;
    expect(close(r.loss, w.loss), `${r.key} loss ${r.loss} vs ${w.loss}`).toBe(true);
    expect(r.mass.length).toBe(w.gradMass.length);
    r.mass.forEach((m, b) => {
      expect(close(m, w.gradMass[b]!), `${r.key} mass ${b} ${m} vs ${w.gradMass[b]}`).toBe(true);
    });
  });
}

/** The page's documented edit rule (docs/playground.md#the-edit-rule), built independently. */
function edited(lengths: number[], advantages: number[], gap: number): PolicyLossInputs {
  const lp = BUILTIN_BATCH.logprobs as number[][];
  const old = BUILTIN_BATCH.oldLogprobs as number[][];
  const mask = lengths.map((L) => Array.from({ length: 8 }, (_, t) => (t < L ? 1 : 0)));
  return {
    logprobs: lp,
    oldLogprobs: old.map((row, b) => row.map((v, t) => (mask[b]![t] === 1 ? v - gap : v))),
    advantages,
    responseMask: mask,
  };
}

/** The page's globals used below (the test's tsconfig has no DOM lib). */
interface InPage {
  document: { body: { dataset: Record<string, string | undefined> } };
  DataTransfer: new () => { items: { add(file: unknown): void } };
  File: new (parts: string[], name: string, options: { type: string }) => unknown;
}

/** Wait until the page has rendered again (its `body[data-version]` moved on from `before`). */
async function changed(page: Page, before: string | null): Promise<void> {
  await page.waitForFunction(
    (v) => (globalThis as unknown as InPage).document.body.dataset.version !== v,
    before ?? undefined,
  );
}

async function selectedLoss(page: Page): Promise<number> {
  return Number(await page.getAttribute("#selected-loss", "data-value"));
}

describe.skipIf(!available)("playground", () => {
  let browser: Browser;
  let server: Server;
  let page: Page;
  let origin: string;
  const foreign: string[] = [];

  beforeAll(async () => {
    const { build } = await import("vite");
    const outDir = mkdtempSync(join(tmpdir(), "polgrad-web-"));
    await build({
      root: join(root, "web"),
      configFile: join(root, "web/vite.config.ts"),
      logLevel: "silent",
      build: { outDir, emptyOutDir: true },
    });
    server = await serve(outDir);
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const b = await launchChromium(FILE);
    if (b === null) throw new Error("Chromium vanished between collection and launch");
    browser = b;
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.on("request", (r) => {
      if (!r.url().startsWith(origin)) foreign.push(r.url());
    });
    await page.goto(`${origin}/`);
    await page.waitForSelector("#which-table tbody tr");
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => server?.close(r));
  });

  test("golden: the rendered which table of the built-in batch equals whichTable(BUILTIN_BATCH)", async () => {
    expectTableOf(await renderedTable(page), BUILTIN_BATCH);
    expect(await page.textContent("#batch-source")).toContain("built-in batch");
    await page.screenshot({ path: screenshotPath("playground-builtin"), fullPage: true });
  });

  test("golden: editing an advantage, a length (by keyboard) and the gap recomputes the which table of the edited batch", async () => {
    await page.fill("#advantage-0", "2.5");
    expectTableOf(await renderedTable(page), edited([2, 4, 6, 8], [2.5, -0.8, 0.6, -1.2], 0));
    // Keyboard only: ArrowDown on the focused number input steps row 1's length from 4 to 3.
    await page.focus("#length-1");
    await page.keyboard.press("ArrowDown");
    expect(await page.inputValue("#length-1")).toBe("3");
    await page.fill("#gap", "0.3");
    const batch = edited([2, 3, 6, 8], [2.5, -0.8, 0.6, -1.2], 0.3);
    expectTableOf(await renderedTable(page), batch);
    // The selected configuration follows too: dr_grpo (the default) with normLen = T = 8.
    const want = policyLoss({ ...ALGORITHMS.dr_grpo.loss, normLen: 8 }, batch).loss;
    expect(close(await selectedLoss(page), want)).toBe(true);
    await page.screenshot({ path: screenshotPath("playground-edited"), fullPage: true });
    await page.click("#reset");
    expectTableOf(await renderedTable(page), BUILTIN_BATCH);
  });

  test("golden: a registry algorithm and a framework model show policyLoss's and evaluate's loss, gradient and mass", async () => {
    await page.selectOption("#config", "alg:dapo");
    const dapo = policyLoss(ALGORITHMS.dapo.loss, BUILTIN_BATCH);
    expect(close(await selectedLoss(page), dapo.loss)).toBe(true);
    await page.selectOption("#config", "alg:dr_grpo");
    const dr = policyLoss({ ...ALGORITHMS.dr_grpo.loss, normLen: 8 }, BUILTIN_BATCH);
    expect(close(await selectedLoss(page), dr.loss)).toBe(true);
    expect(await page.textContent("#config-note")).toContain("normLen set to T = 8");

    const id = "trl@f2cd5771:grpo:token";
    await page.selectOption("#config", `fw:${id}`);
    const fw = getFrameworkModel(id).evaluate(BUILTIN_BATCH);
    expect(close(await selectedLoss(page), fw.loss)).toBe(true);
    // Heat map cells carry ∂loss/∂logprobs; padding is marked as padding.
    const cells = await page.$$eval("#heatmap-svg g[data-row]", (gs) =>
      gs.map((g) => ({
        v: Number(g.getAttribute("data-value")),
        pad: g.getAttribute("data-padding") === "true",
      })),
    );
    expect(cells.length).toBe(32);
    const mask = (BUILTIN_BATCH.responseMask as boolean[][]).flat();
    cells.forEach((c, i) => {
      expect(close(c.v, fw.gradLogprobs.data[i]!)).toBe(true);
      expect(c.pad).toBe(!mask[i]);
    });
    // The mass bars equal the which table's mass of the same framework row.
    const bars = await page.$$eval("#mass-list li", (lis) =>
      lis.map((li) => Number(li.getAttribute("data-value"))),
    );
    const row = whichTable(BUILTIN_BATCH).rows.find((r) => r.key === id)!;
    bars.forEach((m, b) => expect(close(m, row.gradMass[b]!)).toBe(true));
    expect(await page.textContent("#heatmap-summary")).toContain("Largest |gradient|");
    await page.screenshot({ path: screenshotPath("playground-framework"), fullPage: true });

    // The built-in batch is loaded with ref = rollout = old (as polgrad explain takes it), so a
    // KL configuration evaluates: grpo's k3 KL term is 0 there and its loss is policyLoss's.
    await page.selectOption("#config", "alg:grpo");
    expect(await page.textContent("#config-error")).toBe("");
    const grpo = policyLoss(ALGORITHMS.grpo.loss, {
      ...BUILTIN_BATCH,
      refLogprobs: BUILTIN_BATCH.oldLogprobs,
    });
    expect(close(await selectedLoss(page), grpo.loss)).toBe(true);
    // A configuration whose stream the batch lacks shows the library's typed error.
    await page.selectOption("#config", "alg:top_entropy");
    expect(await page.textContent("#config-error")).toContain("entropies must be given");
    await page.selectOption("#config", "alg:dr_grpo");
  });

  test("golden: a JSON batch file picked through the file input or dropped becomes the batch, and a bad file shows the typed error", async () => {
    const doc = {
      logprobs: [
        [-0.5, -1.0, -0.25],
        [-0.75, -0.1, -2.0],
      ],
      old_logprobs: [
        [-0.6, -0.9, -0.3],
        [-0.7, -0.2, -1.5],
      ],
      advantages: [0.8, -0.4],
      response_mask: [
        [true, true, false],
        [true, true, true],
      ],
    };
    const bytes = Buffer.from(JSON.stringify(doc));
    const version = await page.getAttribute("body", "data-version");
    await page.setInputFiles("#file", {
      name: "tiny.json",
      mimeType: "application/json",
      buffer: bytes,
    });
    await changed(page, version);
    expect(await page.textContent("#batch-source")).toContain("tiny.json (json, B = 2, T = 3)");
    const batch = toBatch(readTensorsFromBytes(new Uint8Array(bytes), "tiny.json"));
    expectTableOf(await renderedTable(page), batch);
    expect(
      close(
        await selectedLoss(page),
        policyLoss({ ...ALGORITHMS.dr_grpo.loss, normLen: 3 }, batch).loss,
      ),
    ).toBe(true);
    await page.screenshot({ path: screenshotPath("playground-file"), fullPage: true });

    const bad = Buffer.from(
      JSON.stringify({ logprobs: doc.logprobs, response_mask: doc.response_mask }),
    );
    const v2 = await page.getAttribute("body", "data-version");
    await page.setInputFiles("#file", {
      name: "bad.json",
      mimeType: "application/json",
      buffer: bad,
    });
    await changed(page, v2);
    const err = await page.textContent("#file-error");
    expect(err).toContain("Could not read bad.json");
    expect(err).toContain("E_IO");
    expect(err).toContain("missing old_logprobs, advantages");
    // The previous batch stays.
    expectTableOf(await renderedTable(page), batch);

    // Dropped on the drop zone (a real drop event with a DataTransfer holding the file).
    const text = JSON.stringify({ ...doc, advantages: [-1.25, 0.5] });
    const dataTransfer = await page.evaluateHandle((body) => {
      const g = globalThis as unknown as InPage;
      const dt = new g.DataTransfer();
      dt.items.add(new g.File([body], "dropped.json", { type: "application/json" }));
      return dt;
    }, text);
    const v3 = await page.getAttribute("body", "data-version");
    await page.dispatchEvent("#drop", "drop", { dataTransfer });
    await changed(page, v3);
    expect(await page.textContent("#batch-source")).toContain("dropped.json");
    expect(await page.textContent("#file-error")).toBe("");
    const dropped = toBatch(readTensorsFromBytes(new TextEncoder().encode(text), "dropped.json"));
    expectTableOf(await renderedTable(page), dropped);
  });

  test("identity: the page says dropped files stay in the browser and makes no request outside its origin", async () => {
    expect(await page.textContent("#drop-help")).toContain("nothing is uploaded");
    expect(await page.isVisible("#drop-help")).toBe(true);
    expect(foreign).toEqual([]);
  });
});

interface RenderedSummary {
  key: string;
  loss: number;
  spread: number[];
  top: string;
}

/** A real-sized batch's which table: loss, mass min / median / max and top sequences per row. */
async function renderedSummary(page: Page): Promise<RenderedSummary[]> {
  return page.$$eval("#which-table tbody tr", (trs) =>
    trs.map((tr) => {
      const v = (col: string) =>
        tr.querySelector(`[data-col="${col}"]`)?.getAttribute("data-value") ?? "";
      return {
        key: tr.getAttribute("data-key") as string,
        loss: Number(v("loss")),
        spread: [Number(v("spread-min")), Number(v("spread-median")), Number(v("spread-max"))],
        top: v("top"),
      };
    }),
  );
}

function expectSummaryOf(rendered: RenderedSummary[], batch: PolicyLossInputs): void {
  const want = whichTable(batch).rows;
  expect(rendered.map((r) => r.key)).toEqual(want.map((r) => r.key));
  rendered.forEach((r, i) => {
    const w = want[i]!;
    expect(close(r.loss, w.loss), `${r.key} loss ${r.loss} vs ${w.loss}`).toBe(true);
    const s = spread(w.gradMass);
    [s.min, s.median, s.max].forEach((x, k) => {
      expect(close(r.spread[k]!, x), `${r.key} spread ${k}: ${r.spread[k]} vs ${x}`).toBe(true);
    });
    expect(r.top, r.key).toBe(topIndices(w.gradMass).join(","));
  });
}

/** `polgrad playground FILE --no-open` as a process: its address, and a stop that waits for exit. */
async function servePlayground(path: string): Promise<{ at: string; stop: () => Promise<void> }> {
  const { spawn } = await import("node:child_process");
  const { BIN } = await import("../cli/_run.js");
  const child = spawn(process.execPath, [BIN, "playground", path, "--no-open"]);
  let out = "";
  const at = await new Promise<string>((resolve) =>
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m !== null) resolve(m[1] as string);
    }),
  );
  return {
    at,
    stop: async () => {
      child.kill("SIGINT");
      await new Promise((r) => child.on("close", r));
    },
  };
}

/** Wait until the served batch `name` is the page's batch and its summary table is drawn. */
async function loaded(page: Page, name: string): Promise<void> {
  await page.waitForFunction(
    (n) =>
      (
        globalThis as unknown as { document: { body: { textContent: string } } }
      ).document.body.textContent.includes(n),
    name,
    { timeout: 30_000 },
  );
  await page.waitForSelector('#which-table[data-layout="summary"] tbody tr [data-col="loss"]', {
    timeout: 30_000,
  });
}

describe.skipIf(!available)("playground served by polgrad playground", () => {
  test("conformance: a 128×1024 batch in safetensors, npz and pt (torch.save), served by the command, is loaded by the page as a real-sized batch: its which table summary is the library's, its raster heat map decodes, and its list holds only the rows in view", async () => {
    const { encodeSafetensors } = await import("../../src/io/writeSafetensors.js");
    const { npzBytes } = await import("../io/_writers.js");
    const { realSizedBatch, asSafetensors } = await import("../_kit/realSizedBatch.js");
    const big = realSizedBatch();
    const { B, T } = big;
    const dir = mkdtempSync(join(tmpdir(), "polgrad-playground-big-"));
    const files: Record<string, Uint8Array> = {
      "big.safetensors": encodeSafetensors(asSafetensors(big)),
      "big.npz": npzBytes({
        logprobs: { descr: "<f8", shape: [B, T], data: big.logprobs },
        old_logprobs: { descr: "<f8", shape: [B, T], data: big.oldLogprobs },
        advantages: { descr: "<f8", shape: [B], data: big.advantages },
        response_mask: { descr: "|b1", shape: [B, T], data: big.responseMask },
      }),
    };
    // The .pt: the npz's arrays saved by the real torch.save (Debian's python3-torch), when there.
    const pt = torchSave(dir, files["big.npz"] as Uint8Array);
    if (pt === null)
      console.log(
        `${FILE}: the .pt case is skipped: no python3 that imports torch and numpy (scripts/install-test-tools.sh installs python3-torch)`,
      );
    else files["big.pt"] = pt;
    const browser = (await launchChromium(FILE)) as Browser;
    try {
      for (const [name, bytes] of Object.entries(files)) {
        const path = join(dir, name);
        writeFileSync(path, bytes);
        const served = await servePlayground(path);
        const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
        const foreign: string[] = [];
        page.on("request", (r) => {
          if (!r.url().startsWith(served.at)) foreign.push(r.url());
        });
        await page.goto(served.at);
        await loaded(page, name);
        const batch = toBatch(readTensorsFromBytes(bytes, name));
        expectSummaryOf(await renderedSummary(page), batch);
        // The raster heat map: one pixel a token at this size, decoded by the browser.
        await page.waitForSelector("#heatmap-img");
        const img = await page.$eval("#heatmap-img", (i) => {
          const e = i as unknown as {
            complete: boolean;
            naturalWidth: number;
            naturalHeight: number;
          };
          return [
            e.complete,
            e.naturalWidth,
            e.naturalHeight,
            i.getAttribute("data-cells-per-pixel"),
          ];
        });
        expect(img).toEqual([true, T, B, "1x1"]);
        // The list: the first rows are there with the file's values, far fewer than B rows.
        const shown = await page.$$eval("#sequence-table tbody tr[data-row]", (trs) => trs.length);
        expect(shown).toBeGreaterThan(5);
        expect(shown).toBeLessThan(40);
        expect(Number(await page.inputValue("#length-0"))).toBe(1);
        expect(Number(await page.inputValue("#advantage-3"))).toBe(big.advantages[3]);
        expect(await page.$("#length-100")).toBeNull();
        expect(foreign).toEqual([]);
        if (name.endsWith(".safetensors"))
          await page.screenshot({ path: screenshotPath("playground-real-sized"), fullPage: true });
        await page.close();
        await served.stop();
      }
    } finally {
      await browser.close();
    }
  }, 120_000);

  test("golden: on a real-sized batch, a length edited in the list, every length capped, every advantage scaled and shifted, and one sequence chosen in detail give the library's numbers for the edited batch", async () => {
    const { encodeSafetensors } = await import("../../src/io/writeSafetensors.js");
    const { realSizedBatch, asSafetensors, asInputs } = await import("../_kit/realSizedBatch.js");
    const big = realSizedBatch();
    const { B, T } = big;
    const dir = mkdtempSync(join(tmpdir(), "polgrad-playground-edit-"));
    const path = join(dir, "big.safetensors");
    writeFileSync(path, encodeSafetensors(asSafetensors(big)));
    const loadedLengths = Array.from({ length: B }, (_, b) => 1 + ((b * 389) % T));
    // The edit rule on this batch (its masks are prefixes): row b's mask is t < lengths[b].
    const evaluated = (lengths: number[], advantages: ArrayLike<number>): PolicyLossInputs => ({
      ...asInputs(big),
      advantages: Float64Array.from(advantages),
      responseMask: {
        rows: B,
        cols: T,
        data: Uint8Array.from({ length: B * T }, (_, i) =>
          i % T < (lengths[(i / T) | 0] as number) ? 1 : 0,
        ),
      },
    });
    const served = await servePlayground(path);
    const browser = (await launchChromium(FILE)) as Browser;
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      await page.goto(served.at);
      await loaded(page, "big.safetensors");
      expect(loadedLengths[0]).toBe(1);
      // Go to sequence 100 (not in the document until then), edit its length.
      await page.fill("#goto-sequence", "100");
      await page.press("#goto-sequence", "Enter");
      await page.waitForSelector("#length-100");
      const lengths = [...loadedLengths];
      lengths[100] = 5;
      let v = await page.getAttribute("body", "data-version");
      await page.fill("#length-100", "5");
      await changed(page, v);
      expectSummaryOf(await renderedSummary(page), evaluated(lengths, big.advantages));
      expect(await page.textContent("#batch-summary")).toContain("1 sequence(s) edited");
      // Cap every length at 64.
      v = await page.getAttribute("body", "data-version");
      await page.fill("#cap-length", "64");
      await page.click("#apply-cap");
      await changed(page, v);
      const capped = lengths.map((L) => Math.min(L, 64));
      expectSummaryOf(await renderedSummary(page), evaluated(capped, big.advantages));
      expect(Number(await page.inputValue("#length-100"))).toBe(5);
      // Every advantage × 2 then + 0.1 (the page computes a · k + c).
      v = await page.getAttribute("body", "data-version");
      await page.fill("#scale-advantages", "2");
      await page.fill("#shift-advantages", "0.1");
      await page.click("#apply-advantages");
      await changed(page, v);
      const scaled = Array.from(big.advantages, (a) => a * 2 + 0.1);
      const batch = evaluated(capped, scaled);
      expectSummaryOf(await renderedSummary(page), batch);
      // The chosen configuration (dr_grpo, normLen = T) and one sequence in detail.
      const dr = policyLoss({ ...ALGORITHMS.dr_grpo.loss, normLen: T }, batch);
      expect(close(await selectedLoss(page), dr.loss)).toBe(true);
      await page.fill("#detail-sequence", "3");
      await page.waitForSelector('#detail-table[data-sequence="3"]');
      const detail = await page.$$eval("#detail-table tbody tr", (trs) =>
        trs.map((tr) => [
          Number(tr.getAttribute("data-t")),
          Number(tr.querySelector('[data-col="grad"]')?.getAttribute("data-value")),
        ]),
      );
      expect(detail.length).toBe(capped[3]);
      detail.forEach(([t, g]) => {
        expect(close(g as number, dr.gradLogprobs.data[3 * T + (t as number)]!)).toBe(true);
      });
      // An unusable value is named and blocks the edits to every sequence until corrected.
      await page.fill("#length-100", "-1");
      await page.waitForFunction(() =>
        (
          globalThis as unknown as {
            document: { getElementById(id: string): { textContent: string } };
          }
        ).document
          .getElementById("edit-error")
          .textContent.includes("Sequence 100 length"),
      );
      await page.click("#apply-cap");
      expect(await page.textContent("#bulk-error")).toContain("Correct the marked sequences first");
      // Undo every edit: the loaded batch again.
      v = await page.getAttribute("body", "data-version");
      await page.click("#undo-edits");
      await changed(page, v);
      expectSummaryOf(await renderedSummary(page), asInputs(big));
      // Back to the built-in batch: the small editor and table again, the list gone.
      v = await page.getAttribute("body", "data-version");
      await page.click("#reset");
      await changed(page, v);
      expect(await page.isHidden("#batch-large")).toBe(true);
      expect(await page.$$eval("#sequence-table tbody tr", (trs) => trs.length)).toBe(0);
      expect(await page.$$eval("#length-0", (xs) => xs.length)).toBe(1);
      expectTableOf(await renderedTable(page), BUILTIN_BATCH);
      await page.close();
    } finally {
      await browser.close();
      await served.stop();
    }
  }, 120_000);
});

/** `torch.save` of the arrays of an .npz (bench/torchSave.mjs), or null without python3-torch. */
function torchSave(dir: string, npz: Uint8Array): Uint8Array | null {
  const src = join(dir, "for-torch");
  const out = join(dir, "from-torch");
  mkdirSync(src);
  mkdirSync(out);
  writeFileSync(join(src, "big.npz"), npz);
  return torchSaveNpzDir(src, out) === null
    ? new Uint8Array(readFileSync(join(out, "big.pt")))
    : null;
}
