// Sparse multi-output GP algebra: see mvlearn_ext/gp.hpp for the contracts.
// The derivations of the vector-Jacobian products are in the comments; every
// one is checked against finite differences in tests/gaussian_process.
#include "mvlearn_ext/gp.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "mvlearn_ext/clones.hpp"
#include "mvlearn_ext/parallel.hpp"

namespace mvlearn_ext {
namespace gp {

namespace {

// C (m x n) = op(A) op(B), row-major; op(A) is m x k, op(B) is k x n.
void gemm(bool ta, bool tb, idx m, idx n, idx k, const double* A, const double* B, double* C,
          int n_threads) {
    std::vector<double> At, Bt;
    if (ta) {  // A stored k x m
        At.resize(static_cast<std::size_t>(m * k));
        for (idx i = 0; i < k; ++i)
            for (idx j = 0; j < m; ++j) At[j * k + i] = A[i * m + j];
        A = At.data();
    }
    if (tb) {  // B stored n x k
        Bt.resize(static_cast<std::size_t>(k * n));
        for (idx i = 0; i < n; ++i)
            for (idx j = 0; j < k; ++j) Bt[j * n + i] = B[i * k + j];
        B = Bt.data();
    }
    const idx min_chunk = std::max<idx>(1, 32768 / std::max<idx>(1, n * k));
    parallel_for(m, n_threads, min_chunk, [&](idx b, idx e) {
        for (idx i = b; i < e; ++i) {
            double* c = C + i * n;
            std::fill(c, c + n, 0.0);
            for (idx l = 0; l < k; ++l) {
                const double a = A[i * k + l];
                const double* br = B + l * n;
                for (idx j = 0; j < n; ++j) c[j] += a * br[j];
            }
        }
    });
}

// Solve (L L^T) x = c for every column c of the row-major n x ncols matrix X.
void chol_solve_cols(const double* L, idx n, double* X, idx ncols) {
    for (idx c = 0; c < ncols; ++c) {
        for (idx i = 0; i < n; ++i) {  // forward: L y = x
            double s = X[i * ncols + c];
            for (idx j = 0; j < i; ++j) s -= L[i * n + j] * X[j * ncols + c];
            X[i * ncols + c] = s / L[i * n + i];
        }
        for (idx i = n - 1; i >= 0; --i) {  // backward: L^T x = y
            double s = X[i * ncols + c];
            for (idx j = i + 1; j < n; ++j) s -= L[j * n + i] * X[j * ncols + c];
            X[i * ncols + c] = s / L[i * n + i];
        }
    }
}

void transpose(const double* A, idx r, idx c, double* At) {
    for (idx i = 0; i < r; ++i)
        for (idx j = 0; j < c; ++j) At[j * r + i] = A[i * c + j];
}

// Z = B^{-1} X A^{-1} from the Cholesky factors (X: b x a).
void kron_solve_factored(const double* LA, idx a, const double* LB, idx b, const double* X,
                         double* Z) {
    std::vector<double> T(X, X + b * a), Tt(static_cast<std::size_t>(a * b));
    chol_solve_cols(LB, b, T.data(), a);    // T = B^{-1} X
    transpose(T.data(), b, a, Tt.data());   // a x b
    chol_solve_cols(LA, a, Tt.data(), b);   // A^{-1} T^T = Z^T
    transpose(Tt.data(), a, b, Z);
}

}  // namespace

// ---------------------------------------------------------------- Kronecker

void kron_mv(const double* A, idx a, idx ac, const double* B, idx b, idx bc, const double* X,
             double* out, int n_threads) {
    std::vector<double> T(static_cast<std::size_t>(b * ac));
    gemm(false, false, b, ac, bc, B, X, T.data(), n_threads);  // B X
    gemm(false, true, b, a, ac, T.data(), A, out, n_threads);   // (B X) A^T
}

void kron_mv_vjp(const double* A, idx a, idx ac, const double* B, idx b, idx bc, const double* X,
                 const double* Ybar, double* Xbar, double* Abar, double* Bbar, int n_threads) {
    // Y = B X A^T.  dY = dB X A^T + B dX A^T + B X dA^T, so with U = Ybar A:
    // Xbar = B^T U, Bbar = U X^T, Abar = Ybar^T (B X).
    std::vector<double> U(static_cast<std::size_t>(b * ac)), T(static_cast<std::size_t>(b * ac));
    gemm(false, false, b, ac, a, Ybar, A, U.data(), n_threads);
    gemm(true, false, bc, ac, b, B, U.data(), Xbar, n_threads);
    gemm(false, true, b, bc, ac, U.data(), X, Bbar, n_threads);
    gemm(false, false, b, ac, bc, B, X, T.data(), n_threads);
    gemm(true, false, a, ac, b, Ybar, T.data(), Abar, n_threads);
}

bool cholesky(double* L, idx n) {
    for (idx j = 0; j < n; ++j) {
        double d = L[j * n + j];
        for (idx k = 0; k < j; ++k) d -= L[j * n + k] * L[j * n + k];
        if (!(d > 0.0) || !std::isfinite(d)) return false;
        const double ljj = std::sqrt(d);
        L[j * n + j] = ljj;
        for (idx i = j + 1; i < n; ++i) {
            double s = L[i * n + j];
            for (idx k = 0; k < j; ++k) s -= L[i * n + k] * L[j * n + k];
            L[i * n + j] = s / ljj;
        }
        for (idx k = j + 1; k < n; ++k) L[j * n + k] = 0.0;
    }
    return true;
}

bool kron_solve(const double* A, idx a, const double* B, idx b, const double* X, double* Z) {
    std::vector<double> LA(A, A + a * a), LB(B, B + b * b);
    if (!cholesky(LA.data(), a) || !cholesky(LB.data(), b)) return false;
    kron_solve_factored(LA.data(), a, LB.data(), b, X, Z);
    return true;
}

bool kron_solve_vjp(const double* A, idx a, const double* B, idx b, const double* Z,
                    const double* Zbar, double* Xbar, double* Abar, double* Bbar) {
    // Z = B^{-1} X A^{-1}:  dZ = B^{-1} dX A^{-1} - B^{-1} dB Z - Z dA A^{-1}, so
    // Xbar = B^{-1} Zbar A^{-1},  Bbar = -Xbar A Z^T = -B^{-1} Zbar Z^T,
    // Abar = -Z^T Zbar A^{-1} = -Z^T B Xbar.  (A, B symmetric.)
    std::vector<double> LA(A, A + a * a), LB(B, B + b * b);
    if (!cholesky(LA.data(), a) || !cholesky(LB.data(), b)) return false;
    kron_solve_factored(LA.data(), a, LB.data(), b, Zbar, Xbar);
    std::vector<double> BinvZbar(Zbar, Zbar + b * a);  // b x a
    chol_solve_cols(LB.data(), b, BinvZbar.data(), a);
    gemm(false, true, b, b, a, BinvZbar.data(), Z, Bbar, 1);  // (B^{-1} Zbar) Z^T
    for (idx i = 0; i < b * b; ++i) Bbar[i] = -Bbar[i];
    // Abar = -(Z^T Zbar) A^{-1} = -(A^{-1} Zbar^T Z)^T
    std::vector<double> W(static_cast<std::size_t>(a * a));
    gemm(true, false, a, a, b, Zbar, Z, W.data(), 1);  // Zbar^T Z  (a x a)
    chol_solve_cols(LA.data(), a, W.data(), a);         // A^{-1} Zbar^T Z
    for (idx i = 0; i < a; ++i)
        for (idx j = 0; j < a; ++j) Abar[i * a + j] = -W[j * a + i];
    return true;
}

bool kron_logdet(const double* A, idx a, const double* B, idx b, double* logdet, double* Ainv,
                 double* Binv) {
    std::vector<double> LA(A, A + a * a), LB(B, B + b * b);
    if (!cholesky(LA.data(), a) || !cholesky(LB.data(), b)) return false;
    double la = 0.0, lb = 0.0;
    for (idx i = 0; i < a; ++i) la += std::log(LA[i * a + i]);
    for (idx i = 0; i < b; ++i) lb += std::log(LB[i * b + i]);
    *logdet = 2.0 * (static_cast<double>(b) * la + static_cast<double>(a) * lb);
    if (Ainv) {
        for (idx i = 0; i < a * a; ++i) Ainv[i] = 0.0;
        for (idx i = 0; i < a; ++i) Ainv[i * a + i] = 1.0;
        chol_solve_cols(LA.data(), a, Ainv, a);
    }
    if (Binv) {
        for (idx i = 0; i < b * b; ++i) Binv[i] = 0.0;
        for (idx i = 0; i < b; ++i) Binv[i * b + i] = 1.0;
        chol_solve_cols(LB.data(), b, Binv, b);
    }
    return true;
}

// ---------------------------------------------------------- Psi-statistics

void rbf_psi_stats(const double* mu, const double* S, idx P, idx D, const double* Z, idx M,
                   const double* ls, double* psi1, double* psi2, int n_threads) {
    std::vector<double> lam(static_cast<std::size_t>(D));
    for (idx q = 0; q < D; ++q) lam[q] = ls[q] * ls[q];
    const idx min_chunk = std::max<idx>(1, 4096 / std::max<idx>(1, M * M * D));
    parallel_for(P, n_threads, min_chunk, [&](idx b, idx e) {
        for (idx p = b; p < e; ++p) {
            const double* m = mu + p * D;
            const double* s = S + p * D;
            double pre1 = 1.0, pre2 = 1.0;
            for (idx q = 0; q < D; ++q) {
                pre1 *= std::sqrt(lam[q] / (lam[q] + s[q]));
                pre2 *= std::sqrt(lam[q] / (lam[q] + 2.0 * s[q]));
            }
            for (idx i = 0; i < M; ++i) {
                double ex = 0.0;
                for (idx q = 0; q < D; ++q) {
                    const double d = m[q] - Z[i * D + q];
                    ex += d * d / (lam[q] + s[q]);
                }
                psi1[p * M + i] = pre1 * std::exp(-0.5 * ex);
            }
            if (!psi2) continue;
            double* out = psi2 + p * M * M;
            for (idx i = 0; i < M; ++i) {
                for (idx j = i; j < M; ++j) {
                    double ex = 0.0;
                    for (idx q = 0; q < D; ++q) {
                        const double dz = Z[i * D + q] - Z[j * D + q];
                        const double db = m[q] - 0.5 * (Z[i * D + q] + Z[j * D + q]);
                        ex += dz * dz / (4.0 * lam[q]) + db * db / (lam[q] + 2.0 * s[q]);
                    }
                    const double v = pre2 * std::exp(-ex);
                    out[i * M + j] = v;
                    out[j * M + i] = v;
                }
            }
        }
    });
}

void rbf_psi_stats_vjp(const double* mu, const double* S, idx P, idx D, const double* Z, idx M,
                       const double* ls, const double* psi1bar, const double* psi2bar,
                       double* mubar, double* Sbar, double* Zbar, double* lsbar, int n_threads) {
    // log psi1 = sum_q [ -1/2 log(1 + S/l^2) - 1/2 (mu - z)^2 / (l^2 + S) ]
    // log psi2 = sum_q [ -1/2 log(1 + 2S/l^2) - (z - z')^2 / (4 l^2)
    //                    - (mu - (z + z')/2)^2 / (l^2 + 2S) ]
    // and the VJP of psi = exp(log psi) weights d log psi by psibar * psi.
    std::vector<double> lam(static_cast<std::size_t>(D));
    for (idx q = 0; q < D; ++q) lam[q] = ls[q] * ls[q];
    std::fill(Zbar, Zbar + M * D, 0.0);
    std::vector<double> lambar_total(static_cast<std::size_t>(D), 0.0);
    // The outputs' contributions to Zbar and lambar are summed within fixed
    // blocks of outputs, then block by block in order, so that the result
    // does not depend on the number of threads (per-thread partial sums
    // would change the order of the additions with it).
    constexpr idx kBlock = 64;
    const idx n_blocks = (P + kBlock - 1) / kBlock;
    const idx width = M * D + D;
    std::vector<double> partial(static_cast<std::size_t>(n_blocks * width), 0.0);
    const idx min_chunk = std::max<idx>(1, 4096 / std::max<idx>(1, M * M * D * kBlock));
    parallel_for(n_blocks, n_threads, min_chunk, [&](idx bb, idx be) {
        for (idx blk = bb; blk < be; ++blk) {
            double* zb = partial.data() + blk * width;
            double* lb = zb + M * D;
            const idx b = blk * kBlock, e = std::min<idx>(P, b + kBlock);
            for (idx p = b; p < e; ++p) {
                const double* m = mu + p * D;
                const double* s = S + p * D;
                double* mb = mubar + p * D;
                double* sb = Sbar + p * D;
                std::fill(mb, mb + D, 0.0);
                std::fill(sb, sb + D, 0.0);
                double pre1 = 1.0, pre2 = 1.0;
                for (idx q = 0; q < D; ++q) {
                    pre1 *= std::sqrt(lam[q] / (lam[q] + s[q]));
                    pre2 *= std::sqrt(lam[q] / (lam[q] + 2.0 * s[q]));
                }
                if (psi1bar) {
                    for (idx i = 0; i < M; ++i) {
                        const double g = psi1bar[p * M + i];
                        if (g == 0.0) continue;
                        double ex = 0.0;
                        for (idx q = 0; q < D; ++q) {
                            const double d = m[q] - Z[i * D + q];
                            ex += d * d / (lam[q] + s[q]);
                        }
                        const double w = g * pre1 * std::exp(-0.5 * ex);
                        for (idx q = 0; q < D; ++q) {
                            const double c = lam[q] + s[q];
                            const double d = m[q] - Z[i * D + q];
                            const double r = d / c;
                            mb[q] -= w * r;
                            zb[i * D + q] += w * r;
                            sb[q] += w * (-0.5 / c + 0.5 * r * r);
                            lb[q] += w * (-0.5 / c + 0.5 / lam[q] + 0.5 * r * r);
                        }
                    }
                }
                if (psi2bar) {
                    const double* gb = psi2bar + p * M * M;
                    for (idx i = 0; i < M; ++i) {
                        for (idx j = i; j < M; ++j) {
                            const double g =
                                i == j ? gb[i * M + i] : gb[i * M + j] + gb[j * M + i];
                            if (g == 0.0) continue;
                            double ex = 0.0;
                            for (idx q = 0; q < D; ++q) {
                                const double dz = Z[i * D + q] - Z[j * D + q];
                                const double db = m[q] - 0.5 * (Z[i * D + q] + Z[j * D + q]);
                                ex += dz * dz / (4.0 * lam[q]) + db * db / (lam[q] + 2.0 * s[q]);
                            }
                            const double w = g * pre2 * std::exp(-ex);
                            for (idx q = 0; q < D; ++q) {
                                const double c2 = lam[q] + 2.0 * s[q];
                                const double dz = Z[i * D + q] - Z[j * D + q];
                                const double db = m[q] - 0.5 * (Z[i * D + q] + Z[j * D + q]);
                                const double r = db / c2;
                                mb[q] -= w * 2.0 * r;
                                sb[q] += w * (-1.0 / c2 + 2.0 * r * r);
                                const double t = dz / (2.0 * lam[q]);
                                zb[i * D + q] += w * (r - t);
                                zb[j * D + q] += w * (r + t);
                                lb[q] += w * (-0.5 / c2 + 0.5 / lam[q] + t * t + r * r);
                            }
                        }
                    }
                }
            }
        }
    });
    for (idx blk = 0; blk < n_blocks; ++blk) {
        const double* zb = partial.data() + blk * width;
        for (idx i = 0; i < M * D; ++i) Zbar[i] += zb[i];
        for (idx q = 0; q < D; ++q) lambar_total[q] += zb[M * D + q];
    }
    for (idx q = 0; q < D; ++q) lsbar[q] = lambar_total[q] * 2.0 * ls[q];
}

// ------------------------------------------------ masked output statistics

bool masked_output_stats(const double* Yt, idx P, idx N, const double* G, idx K, const double* W,
                         idx J, double* Dst, double* E, double* C, double* cnt, double* ysq,
                         int n_threads) {
    std::atomic<bool> finite{true};
    const idx min_chunk = std::max<idx>(1, 65536 / std::max<idx>(1, N * (K * K + J)));
    parallel_for(P, n_threads, min_chunk, [&](idx b, idx e) {
        bool ok = true;
        for (idx p = b; p < e; ++p) {
            double* Dp = Dst + p * K * K;
            double* Ep = E + p * K;
            double* Cp = C + p * J;
            std::fill(Dp, Dp + K * K, 0.0);
            std::fill(Ep, Ep + K, 0.0);
            std::fill(Cp, Cp + J, 0.0);
            double c = 0.0, yy = 0.0;
            const double* yrow = Yt + p * N;
            for (idx n = 0; n < N; ++n) {
                const double y = yrow[n];
                if (std::isnan(y)) continue;
                if (std::isinf(y)) {
                    ok = false;
                    continue;
                }
                const double* g = G + n * K;
                for (idx i = 0; i < K; ++i) {
                    const double gi = g[i];
                    double* row = Dp + i * K;
                    for (idx j = i; j < K; ++j) row[j] += gi * g[j];
                    Ep[i] += y * gi;
                }
                const double* w = W + n * J;
                for (idx j = 0; j < J; ++j) Cp[j] += w[j];
                c += 1.0;
                yy += y * y;
            }
            for (idx i = 0; i < K; ++i)
                for (idx j = 0; j < i; ++j) Dp[i * K + j] = Dp[j * K + i];
            cnt[p] = c;
            ysq[p] = yy;
        }
        if (!ok) finite.store(false, std::memory_order_relaxed);
    });
    return finite.load();
}

void masked_output_stats_vjp(const double* Yt, idx P, idx N, const double* G, idx K, idx J,
                             const double* Dbar, const double* Ebar, const double* Cbar,
                             double* Gbar, double* Wbar, int n_threads) {
    // D_p = sum g g^T:  <Dbar_p, dD_p> = g^T (Dbar_p + Dbar_p^T) dg per entry.
    std::vector<double> Dsym;
    if (Dbar) {
        Dsym.resize(static_cast<std::size_t>(P * K * K));
        parallel_for(P, n_threads, 64, [&](idx b, idx e) {
            for (idx p = b; p < e; ++p) {
                const double* d = Dbar + p * K * K;
                double* o = Dsym.data() + p * K * K;
                for (idx i = 0; i < K; ++i)
                    for (idx j = 0; j < K; ++j) o[i * K + j] = d[i * K + j] + d[j * K + i];
            }
        });
    }
    std::fill(Gbar, Gbar + N * K, 0.0);
    if (Wbar) std::fill(Wbar, Wbar + N * J, 0.0);
    const idx min_chunk = std::max<idx>(1, 65536 / std::max<idx>(1, P * (K * K + J)));
    parallel_for(N, n_threads, min_chunk, [&](idx b, idx e) {
        for (idx p = 0; p < P; ++p) {
            const double* yrow = Yt + p * N;
            const double* Ds = Dbar ? Dsym.data() + p * K * K : nullptr;
            const double* Ep = Ebar ? Ebar + p * K : nullptr;
            const double* Cp = Cbar ? Cbar + p * J : nullptr;
            for (idx n = b; n < e; ++n) {
                const double y = yrow[n];
                if (std::isnan(y)) continue;
                const double* g = G + n * K;
                double* gb = Gbar + n * K;
                if (Ds) {
                    for (idx i = 0; i < K; ++i) {
                        const double* row = Ds + i * K;
                        double s = 0.0;
                        for (idx j = 0; j < K; ++j) s += row[j] * g[j];
                        gb[i] += s;
                    }
                }
                if (Ep)
                    for (idx i = 0; i < K; ++i) gb[i] += y * Ep[i];
                if (Cp && Wbar) {
                    double* wb = Wbar + n * J;
                    for (idx j = 0; j < J; ++j) wb[j] += Cp[j];
                }
            }
        }
    });
}

// ------------------------------------------------------ sparse pattern sums

namespace {

// o (K) = the sum of the rows V[ind[0]], ..., V[ind[cnt - 1]], added in that
// order. Four rows a pass keep o[j] in a register for four additions (the
// same order, so the same bits as one row a pass), which halves the time of
// a pass over about 80 columns.
MVLEARN_EXT_CLONES void gather_sum_row(const double* __restrict V, idx K,
                                       const std::int64_t* __restrict ind, std::int64_t cnt,
                                       double* __restrict o) {
    std::fill(o, o + K, 0.0);
    std::int64_t k = 0;
    for (; k + 4 <= cnt; k += 4) {
        const double* __restrict a = V + static_cast<idx>(ind[k]) * K;
        const double* __restrict b = V + static_cast<idx>(ind[k + 1]) * K;
        const double* __restrict c = V + static_cast<idx>(ind[k + 2]) * K;
        const double* __restrict d = V + static_cast<idx>(ind[k + 3]) * K;
        for (idx j = 0; j < K; ++j) o[j] = (((o[j] + a[j]) + b[j]) + c[j]) + d[j];
    }
    for (; k < cnt; ++k) {
        const double* __restrict a = V + static_cast<idx>(ind[k]) * K;
        for (idx j = 0; j < K; ++j) o[j] += a[j];
    }
}

}  // namespace

void pattern_sum(const std::int64_t* indptr, idx n_rows, const std::int64_t* indices,
                 const double* V, idx K, double* out, int n_threads) {
    const idx nnz = n_rows > 0 ? static_cast<idx>(indptr[n_rows]) : 0;
    // chunks of about 16k gathered rows each
    const idx min_chunk = std::max<idx>(1, (16384 * n_rows) / std::max<idx>(1, nnz));
    parallel_for(n_rows, n_threads, min_chunk, [&](idx b, idx e) {
        for (idx r = b; r < e; ++r)
            gather_sum_row(V, K, indices + indptr[r], indptr[r + 1] - indptr[r], out + r * K);
    });
}

}  // namespace gp
}  // namespace mvlearn_ext
