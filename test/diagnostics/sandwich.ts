/**
 * Test helper (not a test file): an independent HC3 computation for the cross-checks of
 * test/diagnostics/ols.test.ts and lengthBias.test.ts.
 */

/**
 * The HC3 fit as textbook matrix algebra, written independently of src: X = [1, x] (n × 2),
 * β = (XᵀX)⁻¹Xᵀy, e = y − Xβ, h_i = x_iᵀ(XᵀX)⁻¹x_i, V = (XᵀX)⁻¹ Xᵀ diag(e²/(1 − h)²) X (XᵀX)⁻¹.
 * Plain (uncompensated) sums; returns β₀, β₁ and √V₁₁.
 */
export function sandwich(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
): { intercept: number; slope: number; se: number } {
  const n = x.length;
  const X = Array.from(x, (xi) => [1, xi]);
  const xtx = [
    [0, 0],
    [0, 0],
  ];
  const xty = [0, 0];
  for (let i = 0; i < n; i++)
    for (let j = 0; j < 2; j++) {
      xty[j] += X[i][j] * y[i];
      for (let k = 0; k < 2; k++) xtx[j][k] += X[i][j] * X[i][k];
    }
  const det = xtx[0][0] * xtx[1][1] - xtx[0][1] * xtx[1][0];
  const inv = [
    [xtx[1][1] / det, -xtx[0][1] / det],
    [-xtx[1][0] / det, xtx[0][0] / det],
  ];
  const beta = [0, 1].map((j) => inv[j][0] * xty[0] + inv[j][1] * xty[1]);
  const meat = [
    [0, 0],
    [0, 0],
  ];
  for (let i = 0; i < n; i++) {
    const e = y[i] - (beta[0] + beta[1] * x[i]);
    let h = 0;
    for (let j = 0; j < 2; j++) for (let k = 0; k < 2; k++) h += X[i][j] * inv[j][k] * X[i][k];
    const omega = (e / (1 - h)) ** 2;
    for (let j = 0; j < 2; j++) for (let k = 0; k < 2; k++) meat[j][k] += X[i][j] * omega * X[i][k];
  }
  let v11 = 0; // (inv · meat · inv)[1][1]
  for (let j = 0; j < 2; j++) for (let k = 0; k < 2; k++) v11 += inv[1][j] * meat[j][k] * inv[k][1];
  return { intercept: beta[0], slope: beta[1], se: Math.sqrt(v11) };
}
