/**
 * Where an algorithm's equations and constants come from (docs/derivations/variants.md).
 */

/**
 * A literature reference for a registered algorithm: the paper or upstream artifact, its arXiv id
 * and/or URL, and where inside it the load-bearing equations and numbers sit.
 *
 * @derivation docs/derivations/variants.md#what-an-entry-holds
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > identity: every entry has a titled citation with an arxiv id or a url and non-empty notes
 * @since 0.1.0
 */
export interface Citation {
  /** Exact title of the paper or upstream artifact (e.g. a framework pull request). */
  readonly title: string;
  /** arXiv identifier such as `"1707.06347"`, or `null` for a non-arXiv source. */
  readonly arxiv: string | null;
  /** Canonical URL, or `null`. */
  readonly url: string | null;
  /** Where inside the source the equations and numbers used by the entry live. */
  readonly notes: string;
}
