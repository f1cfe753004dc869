// Interleaved timing: every round runs each arm once, alternately forwards and backwards
// (A B C C B A …), so slow drift of the machine (thermal state, page cache, a neighbour) falls on
// all arms alike and no arm always follows the same one; the summary of an arm is its median
// over the rounds.

/** Seconds taken by a synchronous call. */
export function timeSync(fn) {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** The median of a non-empty list (the mean of the two middle values for an even count). */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 === 1 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/**
 * Run `warmup` untimed rounds, then `rounds` rounds; in each, call every arm's `run()` once, in
 * the given order in even rounds and in reverse in odd ones (A B C, C B A, …), so that what runs
 * just before an arm (the memory the previous call freed, its caches) is not always the same
 * arm: two arms side by side swap places every round. A run returns its time in seconds (or a
 * promise of it; a peer reports its own time). Returns, per arm name, the list of timed rounds'
 * times (in round order) and their median.
 */
export async function interleave(rounds, arms, warmup = 1) {
  const reversed = [...arms].reverse();
  for (let r = 0; r < warmup; r++) for (const a of arms) await a.run();
  const times = Object.fromEntries(arms.map((a) => [a.name, []]));
  for (let r = 0; r < rounds; r++)
    for (const a of r % 2 === 0 ? arms : reversed) times[a.name].push(await a.run());
  const out = {};
  for (const a of arms) out[a.name] = { times: times[a.name], median: median(times[a.name]) };
  return out;
}
