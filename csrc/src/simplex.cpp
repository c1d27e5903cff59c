// Projection onto the scaled simplex by Condat's algorithm (L. Condat,
// "Fast projection onto the simplex and the l1 ball", Math. Programming 158,
// 2016): one pass builds a candidate active set with a running threshold, a
// second pass adds back discarded candidates, and a few Michelot-style sweeps
// remove entries below the threshold. Expected O(m) per row, no sorting.
#include "mvlearn_ext/simplex.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "mvlearn_ext/parallel.hpp"

namespace mvlearn_ext {

double simplex_threshold(const double* y, std::ptrdiff_t m, double s, double* work,
                         std::ptrdiff_t start) {
    double* v = work;        // active candidates
    double* vt = work + m;   // candidates set aside by the first pass
    std::ptrdiff_t nv = 0, nvt = 0;
    v[nv++] = y[start];
    double rho = y[start] - s;
    // Starting from a maximum, rho only grows from max(y) - s in this pass,
    // and entries at or below it never enter the arithmetic (so an entry of
    // -inf, from an overflowed shift, is harmless).
    auto visit = [&](double yi) {
        if (yi > rho) {
            rho += (yi - rho) / static_cast<double>(nv + 1);
            if (rho > yi - s) {
                v[nv++] = yi;
            } else {
                for (std::ptrdiff_t j = 0; j < nv; ++j) vt[nvt++] = v[j];
                nv = 0;
                v[nv++] = yi;
                rho = yi - s;
            }
        }
    };
    for (std::ptrdiff_t i = 0; i < start; ++i) visit(y[i]);
    for (std::ptrdiff_t i = start + 1; i < m; ++i) visit(y[i]);
    for (std::ptrdiff_t j = 0; j < nvt; ++j) {
        const double yj = vt[j];
        if (yj > rho) {
            v[nv++] = yj;
            rho += (yj - rho) / static_cast<double>(nv);
        }
    }
    // Remove entries at or below the threshold until the active set is stable.
    bool changed = true;
    while (changed && nv > 1) {
        changed = false;
        std::ptrdiff_t cur = nv, kept = 0;
        for (std::ptrdiff_t j = 0; j < nv; ++j) {
            const double yj = v[j];
            if (yj > rho || cur == 1) {
                v[kept++] = yj;
            } else {
                --cur;
                rho += (rho - yj) / static_cast<double>(cur);
                changed = true;
            }
        }
        nv = kept;
    }
    return rho;
}

template <class T>
bool project_rows_simplex(Matrix2D<const T> in, Matrix2D<T> out, double s, int n_threads) {
    const std::ptrdiff_t n = in.shape[0], m = in.shape[1];
    if (n == 0 || m == 0) return true;
    std::atomic<bool> all_finite{true};
    const std::ptrdiff_t min_chunk = std::max<std::ptrdiff_t>(1, 16384 / m);
    parallel_for(n, n_threads, min_chunk, [&](std::ptrdiff_t b, std::ptrdiff_t e) {
        std::vector<double> buf(static_cast<std::size_t>(3 * m));
        double* y = buf.data();
        double* work = y + m;
        for (std::ptrdiff_t i = b; i < e; ++i) {
            bool row_ok = true;
            double ymax = -HUGE_VAL;
            std::ptrdiff_t jmax = 0;
            for (std::ptrdiff_t j = 0; j < m; ++j) {
                const double yj = static_cast<double>(in(i, j));
                row_ok &= std::isfinite(yj);
                if (yj > ymax) {
                    ymax = yj;
                    jmax = j;
                }
                y[j] = yj;
            }
            if (!row_ok) {
                all_finite.store(false, std::memory_order_relaxed);
                continue;
            }
            // The projection commutes with a shift of the row. Working on
            // y - max(y) keeps the threshold near -s instead of near max(y),
            // so rounding errors scale with s, not with the magnitude of the
            // row: without the shift, max(y) - s == max(y) once max(y) >> s
            // and [[1e16, 0, 0, 0]] projected to zeros. The shift may
            // overflow to -inf for entries ~1e308 below the maximum; those
            // are never in the support and project to 0 as they should.
            for (std::ptrdiff_t j = 0; j < m; ++j) y[j] -= ymax;
            const double tau = simplex_threshold(y, m, s, work, jmax);
            for (std::ptrdiff_t j = 0; j < m; ++j) {
                const double z = y[j] - tau;
                out(i, j) = static_cast<T>(z > 0.0 ? z : 0.0);
            }
        }
    });
    return all_finite.load();
}

template bool project_rows_simplex<float>(Matrix2D<const float>, Matrix2D<float>, double, int);
template bool project_rows_simplex<double>(Matrix2D<const double>, Matrix2D<double>, double, int);

}  // namespace mvlearn_ext
