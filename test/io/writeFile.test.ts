/**
 * Enforces docs/cli.md#writing-files at the writer itself (src/io/_internal/writeFile.ts): a new
 * file gets 0666 less the umask, an existing one keeps its mode; a link, FIFO or directory at the
 * destination is refused without blocking; a failing chunk leaves the old file and no temporary
 * file; and while inputs are guarded, a file the process read is never replaced.
 */

import { spawnSync } from "node:child_process";
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { guardInputs } from "../../src/io/_internal/inputs.js";
import { writeFileBytes, writeFileChunks } from "../../src/io/_internal/writeFile.js";
import { readTensors } from "../../src/io/readTensors.js";
import { writeSafetensors } from "../../src/io/writeSafetensors.js";
import { expectIoError, useTmpDir } from "./_kit.js";

const tmp = useTmpDir();
const bytes = (s: string) => new TextEncoder().encode(s);

afterEach(() => guardInputs(false));

describe("writeFileChunks", () => {
  test("golden: a new file gets 0666 less the umask, a replaced one keeps its mode", () => {
    const dir = tmp("modes");
    mkdirSync(dir);
    const fresh = join(dir, "new.txt");
    writeFileBytes("test", fresh, bytes("x"));
    expect(statSync(fresh).mode & 0o777).toBe(0o666 & ~process.umask());
    const kept = join(dir, "kept.txt");
    writeFileSync(kept, "old");
    for (const mode of [0o600, 0o640, 0o755]) {
      spawnSync("chmod", [mode.toString(8), kept]);
      writeFileBytes("test", kept, bytes(`mode ${mode}`));
      expect(statSync(kept).mode & 0o777).toBe(mode);
      expect(readFileSync(kept, "utf8")).toBe(`mode ${mode}`);
    }
  });

  test("rejects: a symbolic link, a FIFO and a directory at the destination, without blocking or writing", () => {
    const dir = tmp("kinds");
    mkdirSync(dir);
    const victim = join(dir, "victim.txt");
    writeFileSync(victim, "keep");
    symlinkSync(victim, join(dir, "link"));
    spawnSync("mkfifo", [join(dir, "fifo")]);
    mkdirSync(join(dir, "sub"));
    for (const name of ["link", "fifo", "sub"])
      expectIoError(() => writeFileBytes("test", join(dir, name), bytes("x")), "path");
    expect(readFileSync(victim, "utf8")).toBe("keep");
    expect(readdirSync(dir).sort()).toEqual(["fifo", "link", "sub", "victim.txt"]);
  });

  test("regression: a chunk that throws half-way leaves the old file and no temporary file", () => {
    const dir = tmp("half");
    mkdirSync(dir);
    const path = join(dir, "out.bin");
    writeFileSync(path, "the old file");
    const chunks = (function* () {
      yield bytes("new start");
      throw new Error("the encoder failed");
    })();
    expect(() => writeFileChunks("test", path, chunks)).toThrow("the encoder failed");
    expect(readFileSync(path, "utf8")).toBe("the old file");
    expect(readdirSync(dir)).toEqual(["out.bin"]);
  });

  test("rejects: while inputs are guarded, a file this process read is never replaced", () => {
    const dir = tmp("guard");
    mkdirSync(dir);
    const path = join(dir, "batch.safetensors");
    writeSafetensors(path, { x: { dtype: "F64", shape: [1], data: [1] } });
    const before = readFileSync(path);
    guardInputs(true);
    readTensors(path);
    const e = expectIoError(() => writeFileBytes("test", path, bytes("x")), "path");
    expect(e.message).toContain("an output never replaces an input");
    expect(readFileSync(path).equals(before)).toBe(true);
    // Unguarded (a library caller), reading and writing back is the caller's choice.
    guardInputs(false);
    readTensors(path);
    writeFileBytes("test", path, bytes("rewritten"));
    expect(readFileSync(path, "utf8")).toBe("rewritten");
  });
});
