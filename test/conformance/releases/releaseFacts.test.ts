/**
 * Enforces docs/conformance/releases.md#data: each framework's compact facts file expands to exactly
 * the per-release facts its recorder read (the counts and the SHA-256 of the expanded view that the
 * recorder wrote beside the data), each key's value is recorded once per run of releases where it
 * holds, and malformed data is an IoError.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { expandReleaseFacts } from "../../../src/conformance/releases/expand.js";
import type { CompactReleaseFacts } from "../../../src/conformance/releases/types.js";
import { IoError } from "../../../src/errors.js";

const FRAMEWORKS = ["trl", "verl", "openrlhf"] as const;

function compact(fw: string): CompactReleaseFacts {
  const url = new URL(`../../../src/conformance/releases/data/${fw}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")) as CompactReleaseFacts;
}

describe("expandReleaseFacts", () => {
  test("identity: each framework's file expands to the counts and sha256 its recorder wrote", () => {
    const rows: Record<string, number> = {};
    for (const fw of FRAMEWORKS) {
      const c = compact(fw);
      const facts = expandReleaseFacts(c);
      expect(facts.framework).toBe(fw);
      expect(facts.releases.length).toBe(c.expanded.releases);
      rows[fw] = facts.releases.reduce((n, r) => n + r.keys.length, 0);
      expect(rows[fw]).toBe(c.expanded.keyRows);
      const sha = createHash("sha256").update(JSON.stringify(facts.releases)).digest("hex");
      expect(sha, fw).toBe(c.expanded.sha256);
    }
    // The release lists of docs/conformance/releases.md.
    expect(FRAMEWORKS.map((fw) => compact(fw).releases.length)).toEqual([44, 10, 30]);
    // verl names its configs (--config-name): the default and the Megatron one at every release.
    for (const r of expandReleaseFacts(compact("verl")).releases)
      expect(r.configs?.map((x) => x.name)).toEqual(["ppo_trainer", "ppo_megatron_trainer"]);
    // The recorders' counts (verl: the FSDP config's keys and the other engines' keys it lacks;
    // v0.4.1's flat ppo_megatron_trainer.yaml adds 112).
    expect(rows).toEqual({ trl: 2396, verl: 8465, openrlhf: 4258 });
  });

  test("identity: each key's value is recorded once per run of releases where it holds", () => {
    for (const fw of FRAMEWORKS) {
      const c = compact(fw);
      const index = new Map(c.releases.map((r, i) => [r.label, i]));
      // present[k]: the releases whose key ranges name key k.
      const present = c.keys.map(() => new Set<number>());
      c.releases.forEach((r, i) => {
        for (const [first, count] of r.keyRanges)
          for (let k = first; k < first + count; k++) present[k]?.add(i);
      });
      c.keys.forEach((k, ki) => {
        const covered: number[] = [];
        let prev: { to: number; value: string } | null = null;
        for (const run of k.runs) {
          const a = index.get(run.from) as number;
          const b = index.get(run.to) as number;
          for (let i = a; i <= b; i++) covered.push(i);
          const value = JSON.stringify([run.default, run.type, run.choices]);
          // Two runs that touch hold different values (else they would be one run).
          if (prev !== null && prev.to + 1 === a)
            expect(value, `${fw} ${k.key}`).not.toBe(prev.value);
          expect(prev === null || prev.to < a).toBe(true);
          prev = { to: b, value };
        }
        expect(covered, `${fw} ${k.key}`).toEqual([...(present[ki] as Set<number>)]);
      });
      // Each key once in the table.
      expect(new Set(c.keys.map((k) => k.key)).size).toBe(c.keys.length);
    }
  });

  test("rejects: data that is not the compact format or does not expand to its counts", () => {
    const c = compact("verl");
    const bad = [
      null,
      { ...c, format: "polgrad-release-facts/0" },
      { ...c, framework: "rllm" },
      { ...c, expanded: { ...c.expanded, keyRows: c.expanded.keyRows + 1 } },
      { ...c, keys: [{ ...c.keys[0], runs: [{ ...c.keys[0]?.runs[0], to: "v9.9.9" }] }] },
      {
        ...c,
        releases: c.releases.map((r, i) => (i === 0 ? { ...r, keyLines: r.keyLines.slice(1) } : r)),
      },
      // A named config whose value is no key of the release, whose file is not recorded, or twice.
      ...[
        { name: "x", file: 0, values: [{ key: "no.such.key", default: 1 }] },
        { name: "x", file: 99, values: [] },
        { name: "ppo_trainer", file: 0, values: [] },
      ].map((bad) => ({
        ...c,
        releases: c.releases.map((r, i) =>
          i === 0 ? { ...r, configs: [...(r.configs ?? []), bad] } : r,
        ),
      })),
    ];
    for (const data of bad) {
      const run = () => expandReleaseFacts(data);
      expect(run).toThrow(IoError);
      try {
        run();
      } catch (e) {
        expect((e as IoError).code).toBe("E_IO");
        expect((e as IoError).fn).toBe("expandReleaseFacts");
      }
    }
  });
});
