import { describe, expect, test } from "vitest";
import {
  findRelease,
  RELEASE_FACTS,
  releaseRefs,
} from "../../../src/conformance/frameworkConfig/releases.js";
import {
  OPENRLHF_LOSS_FILES,
  TRL_FILES,
  VERL_FILES,
} from "../../../src/conformance/frameworks/pins.js";
import { UnknownNameError } from "../../../src/errors.js";

describe("RELEASE_FACTS", () => {
  test("identity: every framework's releases are chronological, with unique labels, full commits and hashed files", () => {
    for (const [fw, facts] of Object.entries(RELEASE_FACTS)) {
      expect(facts.framework).toBe(fw);
      const labels = facts.releases.map((r) => r.label);
      expect(new Set(labels).size).toBe(labels.length);
      const dates = facts.releases.map((r) => r.date);
      expect([...dates].sort()).toEqual(dates);
      for (const r of facts.releases) {
        expect(r.commit).toMatch(/^[0-9a-f]{40}$/);
        expect(r.files.length).toBeGreaterThan(0);
        for (const f of r.files) expect(f.sha256).toMatch(/^[0-9a-f]{64}$/);
        const keys = r.keys.map((k) => k.key);
        expect(new Set(keys).size).toBe(keys.length);
        for (const k of r.keys) expect(r.files.map((f) => f.path)).toContain(k.at.path);
      }
    }
  });

  test("identity: the facts agree with the framework models' pins (two recordings of the same upstream files)", () => {
    // The models' pins were hashed by hand (docs/conformance/frameworks.md#pins); the facts by the recorders.
    const sha = (fw: "trl" | "verl" | "openrlhf", label: string, path: string) =>
      RELEASE_FACTS[fw].releases.find((r) => r.label === label)?.files.find((f) => f.path === path)
        ?.sha256;
    expect(sha("trl", "v1.8.0", TRL_FILES["v1.8.0"].path)).toBe(TRL_FILES["v1.8.0"].sha256);
    expect(sha("trl", "f2cd5771", TRL_FILES.f2cd5771.path)).toBe(TRL_FILES.f2cd5771.sha256);
    const trl = RELEASE_FACTS.trl.releases.find((r) => r.label === "f2cd5771");
    expect(trl?.commit).toBe(TRL_FILES.f2cd5771.commit);
    for (const label of ["74a718a4", "1dda039b"] as const)
      expect(RELEASE_FACTS.verl.releases.find((r) => r.label === label)?.commit).toBe(
        VERL_FILES[label].commit,
      );
    // OpenRLHF 3c3be623 is tag v0.11.0's commit: the facts keep the tag's entry.
    expect(RELEASE_FACTS.openrlhf.releases.find((r) => r.label === "v0.11.0")?.commit).toBe(
      OPENRLHF_LOSS_FILES["3c3be623"].commit,
    );
  });

  test("golden: recorded TRL defaults that the issue and the spec state (max_completion_length 256 at v1.9.0, 512 at head)", () => {
    const d = (label: string, key: string) =>
      RELEASE_FACTS.trl.releases.find((r) => r.label === label)?.keys.find((k) => k.key === key)
        ?.default;
    expect(d("v1.9.0", "max_completion_length")).toBe(256);
    expect(d("f2cd5771", "max_completion_length")).toBe(512);
    expect(d("v0.16.0", "loss_type")).toBeUndefined();
    expect(d("v0.17.0", "loss_type")).toBe("bnpo");
    expect(d("v0.22.0", "loss_type")).toBe("dapo");
    expect(d("v0.18.2", "beta")).toBe(0.04);
    expect(d("v0.19.0", "beta")).toBe(0);
  });
});

describe("findRelease", () => {
  test("golden: tags, short commits, head and did-you-mean", () => {
    expect(findRelease("trl@v1.9.0").release.tag).toBe("v1.9.0");
    expect(findRelease("trl@1.9.0").ref).toBe("trl@v1.9.0");
    expect(findRelease("trl@head").ref).toBe("trl@f2cd5771");
    expect(findRelease("verl@1dda039b9c63").ref).toBe("verl@1dda039b");
    expect(findRelease("openrlhf@3c3be623").ref).toBe("openrlhf@v0.11.0");
    expect(releaseRefs("verl")).toContain("verl@74a718a4");
    const run = () => findRelease("trl@v1.9.1");
    expect(run).toThrow(UnknownNameError);
    expect(run).toThrow(/did you mean .*trl@v1\.9\.0/);
  });
});
