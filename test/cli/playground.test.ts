/**
 * Enforces docs/playground.md#from-the-command-line: `polgrad playground [BATCH]` serves the page
 * shipped in the package (dist/web) on 127.0.0.1 with its Content-Security-Policy, the batch
 * beside it at ./batch (its name in a header), nothing outside the page's folder, and stops on
 * Ctrl-C with exit 0; a bad batch or port is an error before anything is served.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { BIN, runMain } from "./_run.js";

const WEB = fileURLToPath(new URL("../../dist/web/index.html", import.meta.url));

/** Start `polgrad playground ARGS --no-open`; resolve to its address once it prints it. */
function start(args: readonly string[]) {
  const child = spawn(process.execPath, [BIN, "playground", ...args, "--no-open"]);
  const out = { stdout: "", stderr: "" };
  child.stderr.on("data", (d: Buffer) => {
    out.stderr += d.toString();
  });
  const address = new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      out.stdout += d.toString();
      const m = /at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out.stdout);
      if (m !== null) resolve(m[1] as string);
    });
    child.on("close", () => reject(new Error(`exited: ${out.stderr}`)));
  });
  const done = new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
  return { child, out, address, done };
}

describe("polgrad playground", () => {
  test("identity: the built page is there (npm run build builds it into dist/web)", () => {
    expect(existsSync(WEB), `${WEB}: run npm run build`).toBe(true);
  });

  test("golden: the shipped page and the batch on 127.0.0.1, nothing else; Ctrl-C stops it with exit 0", async () => {
    const dir = mkdtempSync(join(tmpdir(), "polgrad-playground-"));
    const batch = join(dir, "my batch.json");
    writeFileSync(
      batch,
      JSON.stringify({
        logprobs: [[-1, -0.5]],
        old_logprobs: [[-1.1, -0.4]],
        advantages: [1],
        response_mask: [[1, 1]],
      }),
    );
    const s = start([batch]);
    const at = await s.address;
    const page = await fetch(at);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(await page.text()).toBe(readFileSync(WEB, "utf8"));
    const b = await fetch(`${at}batch`);
    expect(b.status).toBe(200);
    expect(decodeURIComponent(b.headers.get("x-polgrad-batch-name") as string)).toBe(
      "my batch.json",
    );
    expect(Buffer.from(await b.arrayBuffer()).equals(readFileSync(batch))).toBe(true);
    for (const outside of ["..%2F..%2Fpackage.json", "..%2Findex.js", "nope.js"])
      expect((await fetch(`${at}${outside}`)).status).toBe(404);
    expect((await fetch(at, { method: "POST" })).status).toBe(405);
    s.child.kill("SIGINT");
    expect(await s.done).toBe(0);
    expect(s.out.stdout).toBe(
      `polgrad playground: serving my batch.json at ${at} (Ctrl-C stops)\n`,
    );
    expect(s.out.stderr).toBe("");
    // Without a batch the page keeps its built-in one: ./batch is not there.
    const plain = start([]);
    expect((await fetch(`${await plain.address}batch`)).status).toBe(404);
    plain.child.kill("SIGTERM");
    expect(await plain.done).toBe(0);
  }, 30_000);

  test("rejects: a batch that is not one, a port out of range, before anything is served", async () => {
    const dir = mkdtempSync(join(tmpdir(), "polgrad-playground-"));
    writeFileSync(join(dir, "bad.json"), '{"logprobs": [[-1]]}');
    for (const [args, re] of [
      [[join(dir, "bad.json")], /error\[E_IO\]: .*old_logprobs/],
      [["--port", "70000"], /--port must be a port number from 0 to 65535; got 70000/],
    ] as const) {
      const r = await runMain(["playground", ...args, "--no-open"]);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(r.stderr).toMatch(re);
    }
  });
});
