/**
 * Headless Chromium for the browser tests: Debian's `chromium` (scripts/install-test-tools.sh
 * installs it), driven by playwright-core with `executablePath`. `launchChromium()` returns null
 * with a printed reason when no Chromium can be had, so the tests skip instead of failing.
 * Screenshots go to test-output/screenshots/ (not committed).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright-core";

const CANDIDATES = [process.env.POLGRAD_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"];

/** The Chromium executable, or null. */
export function chromiumPath(): string | null {
  for (const c of CANDIDATES) if (c !== undefined && c !== "" && existsSync(c)) return c;
  return null;
}

/** Launch headless Chromium, or null (and print why) when it is not installed. */
export async function launchChromium(file: string): Promise<Browser | null> {
  const exe = chromiumPath();
  if (exe === null) {
    console.log(
      `${file}: browser tests skipped: no Chromium (tried $POLGRAD_CHROMIUM, /usr/bin/chromium; scripts/install-test-tools.sh installs Debian's chromium)`,
    );
    return null;
  }
  const { chromium } = await import("playwright-core");
  return chromium.launch({ executablePath: exe, headless: true, args: ["--no-sandbox"] });
}

/** test-output/screenshots/<name>.png, the folder created. */
export function screenshotPath(name: string): string {
  const dir = fileURLToPath(new URL("../../test-output/screenshots/", import.meta.url));
  mkdirSync(dir, { recursive: true });
  return join(dir, `${name}.png`);
}
