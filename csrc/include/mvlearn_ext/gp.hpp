// Sparse multi-output GP algebra (LVMOGP, Dai, Alvarez & Lawrence 2017):
// Kronecker products, solves and log-determinants, the Psi-statistics of the
// ARD-RBF kernel under Gaussian q(h), and the masked per-output sufficient
// statistics of the bound, each with its vector-Jacobian product (VJP).
// Pure C++17, no Python. All arrays are dense, row-major and contiguous
// float64; shapes are given explicitly. Matrices are small (inducing sizes)
// except the N x P data arrays, which are streamed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mvlearn_ext {
namespace gp {

using idx = std::ptrdiff_t;

// ---------------------------------------------------------------- Kronecker
// (A kron B) vec(X) = vec(B X A^T) with column-major vec.
// A: a x ac, B: b x bc, X: bc x ac  ->  out: b x a.
void kron_mv(const double* A, idx a, idx ac, const double* B, idx b, idx bc, const double* X,
             double* out, int n_threads);
// VJP of kron_mv: given Ybar (b x a): Xbar = B^T Ybar A (bc x ac),
// Abar = Ybar^T B X (a x ac), Bbar = Ybar A X^T (b x bc).
void kron_mv_vjp(const double* A, idx a, idx ac, const double* B, idx b, idx bc, const double* X,
                 const double* Ybar, double* Xbar, double* Abar, double* Bbar, int n_threads);

// In-place lower Cholesky factor of the SPD n x n matrix in L (upper part
// zeroed). Returns false if the matrix is not numerically positive definite.
bool cholesky(double* L, idx n);

// Solve (A kron B) vec(Z) = vec(X) for SPD A (a x a), B (b x b), X (b x a):
// Z = B^{-1} X A^{-1}. Returns false if A or B is not positive definite.
bool kron_solve(const double* A, idx a, const double* B, idx b, const double* X, double* Z);
// VJP of kron_solve, given Z (its output) and Zbar (b x a):
// Xbar = B^{-1} Zbar A^{-1}, Abar = -Z^T Zbar A^{-1}, Bbar = -B^{-1} Zbar Z^T.
bool kron_solve_vjp(const double* A, idx a, const double* B, idx b, const double* Z,
                    const double* Zbar, double* Xbar, double* Abar, double* Bbar);

// log|A kron B| = b log|A| + a log|B| for SPD A (a x a), B (b x b). On
// success writes the log-determinant and, if Ainv/Binv are non-null, the
// inverses (the VJP is gbar * b * A^{-1}, gbar * a * B^{-1}).
bool kron_logdet(const double* A, idx a, const double* B, idx b, double* logdet, double* Ainv,
                 double* Binv);

// ---------------------------------------------------------- Psi-statistics
// ARD-RBF kernel k(h, z) = exp(-1/2 sum_q (h_q - z_q)^2 / l_q^2) (unit
// variance) under q(h_p) = N(mu_p, diag(S_p)), p = 0..P-1:
//   psi1[p, m]     = E k(h_p, z_m)                     (P x M)
//   psi2[p, m, m'] = E k(z_m, h_p) k(h_p, z_m')        (P x M x M)
// mu, S: P x D; Z: M x D; ls: D lengthscales. psi2 may be null.
void rbf_psi_stats(const double* mu, const double* S, idx P, idx D, const double* Z, idx M,
                   const double* ls, double* psi1, double* psi2, int n_threads);
// VJP: given psi1bar (P x M, may be null) and psi2bar (P x M x M, may be
// null), accumulate into mubar, Sbar (P x D), Zbar (M x D), lsbar (D); the
// outputs are overwritten.
void rbf_psi_stats_vjp(const double* mu, const double* S, idx P, idx D, const double* Z, idx M,
                       const double* ls, const double* psi1bar, const double* psi2bar,
                       double* mubar, double* Sbar, double* Zbar, double* lsbar, int n_threads);

// ------------------------------------------------ masked output statistics
// The sufficient statistics of the LVMOGP bound under missing data. Yt is
// the P x N transposed target matrix with NaN marking a missing entry; G is
// N x K, W is N x J (per-input scalars). For every output p, over observed n:
//   Dst[p] = sum_n g_n g_n^T   (P x K x K)
//   E[p]   = sum_n y_np g_n    (P x K)
//   C[p]   = sum_n w_n         (P x J)
//   cnt[p] = number of observed n,  ysq[p] = sum_n y_np^2.
// Returns false if Yt holds an infinity (NaN is "missing").
bool masked_output_stats(const double* Yt, idx P, idx N, const double* G, idx K, const double* W,
                         idx J, double* Dst, double* E, double* C, double* cnt, double* ysq,
                         int n_threads);
// VJP with respect to G and W, given Dbar (P x K x K), Ebar (P x K), Cbar
// (P x J) (each may be null): Gbar_n = sum_p obs (Dbar_p + Dbar_p^T) g_n +
// y_np Ebar_p, Wbar_n = sum_p obs Cbar_p. Outputs overwritten.
void masked_output_stats_vjp(const double* Yt, idx P, idx N, const double* G, idx K, idx J,
                             const double* Dbar, const double* Ebar, const double* Cbar,
                             double* Gbar, double* Wbar, int n_threads);

// ------------------------------------------------------ sparse pattern sums
// out[r] = sum_{k in [indptr[r], indptr[r+1])} V[indices[k]] for the CSR
// pattern (indptr: n_rows + 1, indices: nnz, each in [0, n_cols)); V is
// n_cols x K, out n_rows x K (overwritten). Parallel over rows.
void pattern_sum(const std::int64_t* indptr, idx n_rows, const std::int64_t* indices,
                 const double* V, idx K, double* out, int n_threads);

}  // namespace gp
}  // namespace mvlearn_ext
