/**
 * The playground page (issue 16, docs/playground.md): Vite builds web/ into a temporary folder, a
 * small node:http server serves it, and headless Chromium drives it. The rendered which table,
 * the edited batch, a registry algorithm, a framework model and a loaded JSON file are each
 * compared with the library computing the same thing in Node. Skipped, with the reason printed,
 * when no Chromium is installed.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
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

describe.skipIf(!available)("playground served by polgrad playground", () => {
  test("conformance: a 128×1024 batch in safetensors, npz and pt (torch.save), served by the command, is loaded by the page and its which table is the library's", async () => {
    const { spawn } = await import("node:child_process");
    const { encodeSafetensors } = await import("../../src/io/writeSafetensors.js");
    const { npzBytes } = await import("../io/_writers.js");
    const { BIN } = await import("../cli/_run.js");
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
        const child = spawn(process.execPath, [BIN, "playground", path, "--no-open"]);
        let out = "";
        const at = await new Promise<string>((resolve) =>
          child.stdout.on("data", (d: Buffer) => {
            out += d.toString();
            const m = /at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
            if (m !== null) resolve(m[1] as string);
          }),
        );
        const page = await browser.newPage();
        const foreign: string[] = [];
        page.on("request", (r) => {
          if (!r.url().startsWith(at)) foreign.push(r.url());
        });
        await page.goto(at);
        await page.waitForFunction(
          (n) =>
            (
              globalThis as unknown as { document: { body: { textContent: string } } }
            ).document.body.textContent.includes(n),
          name,
          { timeout: 30_000 },
        );
        await page.waitForSelector(`#which-table tbody tr [data-col="mass-${B - 1}"]`, {
          timeout: 30_000,
        });
        expectTableOf(await renderedTable(page), toBatch(readTensorsFromBytes(bytes, name)));
        expect(foreign).toEqual([]);
        await page.close();
        child.kill("SIGINT");
        await new Promise((r) => child.on("close", r));
      }
    } finally {
      await browser.close();
    }
  }, 120_000);
});

/** `torch.save` of the arrays of an .npz (python3 with torch and numpy), or null without one. */
function torchSave(dir: string, npz: Uint8Array): Uint8Array | null {
  const src = join(dir, "for-torch.npz");
  const out = join(dir, "big-from-torch.pt");
  writeFileSync(src, npz);
  const script =
    "import sys, numpy, torch\n" +
    "a = numpy.load(sys.argv[1])\n" +
    "torch.save({k: torch.from_numpy(a[k]) for k in a.files}, sys.argv[2])\n";
  for (const py of [process.env.POLGRAD_PYTHON, "/usr/bin/python3", "python3"]) {
    if (py === undefined || py === "") continue;
    const r = spawnSync(py, ["-c", script, src, out], { encoding: "utf8", timeout: 120_000 });
    if (r.status === 0) return new Uint8Array(readFileSync(out));
  }
  return null;
}
