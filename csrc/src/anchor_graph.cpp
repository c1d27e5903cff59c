#include "mvlearn_ext/anchor_graph.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "mvlearn_ext/clones.hpp"
#include "mvlearn_ext/parallel.hpp"

namespace mvlearn_ext {
namespace {

constexpr std::ptrdiff_t kAnchorBlock = 128;  // anchors per tile (accumulators stay in L1)
constexpr std::ptrdiff_t kSampleBlock = 8;    // samples sharing one pass over an anchor tile

// Bounded max-heap of (distance, index) keeping the `cap` smallest pairs in
// lexicographic order. Anchors arrive in increasing index, so a tie with the
// current worst never displaces it.
template <class T>
struct BoundedHeap {
    T* d;
    std::int64_t* i;
    std::ptrdiff_t size = 0, cap = 0;

    static bool less(T d1, std::int64_t i1, T d2, std::int64_t i2) {
        return d1 < d2 || (d1 == d2 && i1 < i2);
    }
    void sift_down(std::ptrdiff_t p) {
        for (;;) {
            std::ptrdiff_t l = 2 * p + 1, big = p;
            if (l < size && less(d[big], i[big], d[l], i[l])) big = l;
            if (l + 1 < size && less(d[big], i[big], d[l + 1], i[l + 1])) big = l + 1;
            if (big == p) return;
            std::swap(d[p], d[big]);
            std::swap(i[p], i[big]);
            p = big;
        }
    }
    void push(T dv, std::int64_t iv) {
        if (size < cap) {
            std::ptrdiff_t c = size++;
            d[c] = dv;
            i[c] = iv;
            while (c > 0) {
                std::ptrdiff_t p = (c - 1) / 2;
                if (!less(d[p], i[p], d[c], i[c])) break;
                std::swap(d[p], d[c]);
                std::swap(i[p], i[c]);
                c = p;
            }
        } else if (less(dv, iv, d[0], i[0])) {
            d[0] = dv;
            i[0] = iv;
            sift_down(0);
        }
    }
    // Sort the kept pairs ascending (heap sort in place).
    void sort_ascending() {
        std::ptrdiff_t n = size;
        while (size > 1) {
            --size;
            std::swap(d[0], d[size]);
            std::swap(i[0], i[size]);
            sift_down(0);
        }
        size = n;
    }
};

// acc[r * kAnchorBlock + j] = sum_f (x[r, f] - at[f * m + j])^2 for r < sb
// and j < jb, where `at` points at column j0 of the transposed anchors. The
// loop over j is an element-wise update, so it vectorises without
// reassociating any sum: each distance is the same left-to-right sum over
// features as the scalar computation.
template <class T>
__attribute__((always_inline)) inline void sq_dist_tile_body(const T* __restrict x,
                                                            std::ptrdiff_t sb, std::ptrdiff_t d,
                                                            const T* __restrict at,
                                                            std::ptrdiff_t m, std::ptrdiff_t jb,
                                                            T* __restrict acc) {
    for (std::ptrdiff_t r = 0; r < sb; ++r) {
        T* __restrict ar = acc + r * kAnchorBlock;
        const T* xr = x + r * d;
        for (std::ptrdiff_t j = 0; j < jb; ++j) ar[j] = T(0);
        for (std::ptrdiff_t f = 0; f < d; ++f) {
            const T xv = xr[f];
            const T* __restrict a = at + f * m;
            for (std::ptrdiff_t j = 0; j < jb; ++j) {
                const T diff = xv - a[j];
                ar[j] += diff * diff;
            }
        }
    }
}

// Compiled for several instruction sets (MVLEARN_EXT_CLONES, clones.hpp).
MVLEARN_EXT_CLONES void sq_dist_tile(const double* x, std::ptrdiff_t sb, std::ptrdiff_t d,
                                     const double* at, std::ptrdiff_t m, std::ptrdiff_t jb,
                                     double* acc) {
    sq_dist_tile_body(x, sb, d, at, m, jb, acc);
}

MVLEARN_EXT_CLONES void sq_dist_tile(const float* x, std::ptrdiff_t sb, std::ptrdiff_t d,
                                     const float* at, std::ptrdiff_t m, std::ptrdiff_t jb,
                                     float* acc) {
    sq_dist_tile_body(x, sb, d, at, m, jb, acc);
}

// A squared distance as s * 4^e with s in [1, 4), or s == 0 with e = kZeroExp:
// its range is that of int, so it neither overflows nor underflows for any
// finite input, and (e, s) compares like the value it stands for.
constexpr int kZeroExp = -(1 << 20);

struct WideSq {
    int e = kZeroExp;
    double s = 0.0;
    bool operator<(const WideSq& o) const { return e < o.e || (e == o.e && s < o.s); }
    bool operator==(const WideSq& o) const { return e == o.e && s == o.s; }
};

// ||x - a||^2 for the anchor in column j of the transposed anchors, with
// every difference scaled by the power of two of the largest one (exact
// scalings): no term overflows, and the terms that underflow are below the
// rounding error of the sum. A difference that overflows (|x|, |a| near the
// largest finite value) is taken of the halves instead.
template <class T>
WideSq wide_sq_dist(const T* x, const T* at, std::ptrdiff_t m, std::ptrdiff_t d,
                    std::ptrdiff_t j) {
    double big = 0.0;
    bool halve = false;
    for (std::ptrdiff_t f = 0; f < d; ++f) {
        const double diff = static_cast<double>(x[f]) - static_cast<double>(at[f * m + j]);
        halve |= !std::isfinite(diff);
        big = std::max(big, std::fabs(diff));
    }
    if (halve) {
        big = 0.0;
        for (std::ptrdiff_t f = 0; f < d; ++f)
            big = std::max(big, std::fabs(0.5 * static_cast<double>(x[f]) -
                                          0.5 * static_cast<double>(at[f * m + j])));
    }
    WideSq out;
    if (big == 0.0) return out;
    const int e0 = std::ilogb(big);
    double s = 0.0;
    for (std::ptrdiff_t f = 0; f < d; ++f) {
        const double xf = static_cast<double>(x[f]), af = static_cast<double>(at[f * m + j]);
        const double diff = halve ? 0.5 * xf - 0.5 * af : xf - af;
        const double v = std::ldexp(diff, -e0);
        s += v * v;
    }
    const int t = std::ilogb(s) >> 1;  // s in [1, 4d): bring it into [1, 4)
    out.s = std::ldexp(s, -2 * t);
    out.e = e0 + t + (halve ? 1 : 0);
    return out;
}

// Squared distances below this bound may hold subnormal terms, whose
// rounding error is no longer relative to the sum.
template <class T>
constexpr T reliable_floor() {
    return std::numeric_limits<T>::min() / std::numeric_limits<T>::epsilon();
}

// Squared distances above this bound may overflow in the weights' sums
// (k of them, k far below 1 / epsilon).
template <class T>
constexpr T reliable_ceiling() {
    return std::numeric_limits<T>::max() * std::numeric_limits<T>::epsilon();
}

// Whether the k nearest found by the fast tiled sums are the right ones, in
// the right order, with relative accuracy. Overflow shows as a sum above
// reliable_ceiling (inf included: every term is non-negative); underflow as
// a sum below reliable_floor. `all_accurate`
// asks for every kept distance to be accurate; otherwise the nearest one may
// be inaccurate (it is then below every other and its error is negligible
// next to them), which keeps a sample that coincides with an anchor on the
// fast path.
template <class T>
bool fast_path_holds(const T* dist, std::ptrdiff_t kk, bool all_accurate) {
    if (!(dist[kk - 1] <= reliable_ceiling<T>())) return false;
    const std::ptrdiff_t first = (all_accurate || kk == 1) ? 0 : 1;
    return dist[first] >= reliable_floor<T>();
}

// Run `visit(row, dist, ind)` for every sample with its kk nearest anchors
// sorted ascending. The anchors are transposed once (d x m) so the inner loop
// runs over contiguous anchors with independent accumulators and vectorises
// without reassociating any sum. `dist` points at squared distances of type
// T (the fast path, whenever fast_path_holds) or at WideSq keys (samples
// whose squared distances overflow or underflow in T).
template <class T, class Visit>
bool for_each_knn(Matrix2D<const T> X, Matrix2D<const T> A, std::ptrdiff_t kk, int n_threads,
                  bool all_accurate, Visit&& visit) {
    const std::ptrdiff_t n = X.shape[0], d = X.shape[1], m = A.shape[0];
    std::vector<T> At(static_cast<std::size_t>(d * m));
    for (std::ptrdiff_t j = 0; j < m; ++j)
        for (std::ptrdiff_t f = 0; f < d; ++f) {
            const T a = A(j, f);
            if (!std::isfinite(static_cast<double>(a))) return false;
            At[static_cast<std::size_t>(f * m + j)] = a;
        }
    std::atomic<bool> all_finite{true};
    parallel_for(n, n_threads, 64, [&](std::ptrdiff_t b, std::ptrdiff_t e) {
        std::vector<T> xbuf(static_cast<std::size_t>(kSampleBlock * d));
        std::vector<T> acc(static_cast<std::size_t>(kSampleBlock * kAnchorBlock));
        std::vector<T> hd(static_cast<std::size_t>(kSampleBlock * kk));
        std::vector<std::int64_t> hi(static_cast<std::size_t>(kSampleBlock * kk));
        std::vector<BoundedHeap<T>> heaps(static_cast<std::size_t>(kSampleBlock));
        std::vector<WideSq> wd(static_cast<std::size_t>(kk));
        std::vector<std::int64_t> wi(static_cast<std::size_t>(kk));
        for (std::ptrdiff_t s0 = b; s0 < e; s0 += kSampleBlock) {
            const std::ptrdiff_t sb = std::min(kSampleBlock, e - s0);
            bool ok = true;
            for (std::ptrdiff_t r = 0; r < sb; ++r) {
                for (std::ptrdiff_t f = 0; f < d; ++f) {
                    const T x = X(s0 + r, f);
                    ok &= std::isfinite(static_cast<double>(x));
                    xbuf[static_cast<std::size_t>(r * d + f)] = x;
                }
                heaps[r] = BoundedHeap<T>{hd.data() + r * kk, hi.data() + r * kk, 0, kk};
            }
            if (!ok) {
                all_finite.store(false, std::memory_order_relaxed);
                continue;
            }
            for (std::ptrdiff_t j0 = 0; j0 < m; j0 += kAnchorBlock) {
                const std::ptrdiff_t jb = std::min(kAnchorBlock, m - j0);
                sq_dist_tile(xbuf.data(), sb, d, At.data() + j0, m, jb, acc.data());
                for (std::ptrdiff_t r = 0; r < sb; ++r) {
                    const T* ar = acc.data() + r * kAnchorBlock;
                    BoundedHeap<T>& h = heaps[r];
                    for (std::ptrdiff_t j = 0; j < jb; ++j) h.push(ar[j], j0 + j);
                }
            }
            for (std::ptrdiff_t r = 0; r < sb; ++r) {
                heaps[r].sort_ascending();
                if (fast_path_holds(heaps[r].d, kk, all_accurate)) {
                    visit(s0 + r, static_cast<const T*>(heaps[r].d), heaps[r].i);
                    continue;
                }
                BoundedHeap<WideSq> w{wd.data(), wi.data(), 0, kk};
                const T* xr = xbuf.data() + r * d;
                for (std::ptrdiff_t j = 0; j < m; ++j)
                    w.push(wide_sq_dist(xr, At.data(), m, d, j), j);
                w.sort_ascending();
                visit(s0 + r, static_cast<const WideSq*>(w.d), w.i);
            }
        }
    });
    return all_finite.load();
}

// The Euclidean distance in T from either kind of key.
template <class T>
T distance(T sq) {
    return std::sqrt(sq);
}
template <class T>
T distance(const WideSq& w) {
    return static_cast<T>(std::ldexp(std::sqrt(w.s), w.e));
}

// A squared distance in a unit shared by one sample's keys: the fast-path
// values as they are (so the weights stay those of the plain formula), the
// wide keys relative to `ref` (those below it by more than the double range
// underflow to zero, which is their weight's limit).
template <class T>
double relative_sq(T sq, T) {
    return static_cast<double>(sq);
}
inline double relative_sq(const WideSq& w, const WideSq& ref) {
    if (w.s == 0.0) return 0.0;
    return std::ldexp(w.s, 2 * (w.e - ref.e));
}

}  // namespace

template <class T>
bool knn_anchors(Matrix2D<const T> X, Matrix2D<const T> A, std::ptrdiff_t kk, T* dist,
                 std::int64_t* ind, int n_threads) {
    return for_each_knn<T>(X, A, kk, n_threads, true,
                           [&](std::ptrdiff_t row, const auto* dr, const std::int64_t* ir) {
                               for (std::ptrdiff_t j = 0; j < kk; ++j)
                                   dist[row * kk + j] = distance<T>(dr[j]);
                               std::copy(ir, ir + kk, ind + row * kk);
                           });
}

template <class T>
bool knn_anchor_graph(Matrix2D<const T> X, Matrix2D<const T> A, std::ptrdiff_t k, T* weights,
                      std::int64_t* cols, int n_threads) {
    if (k == 0) {
        return for_each_knn<T>(X, A, 1, n_threads, false,
                               [&](std::ptrdiff_t row, const auto*, const std::int64_t* ir) {
                                   weights[row] = T(1);
                                   cols[row] = ir[0];
                               });
    }
    return for_each_knn<T>(
        X, A, k + 1, n_threads, false,
        [&](std::ptrdiff_t row, const auto* dr, const std::int64_t* ir) {
            // Accumulate in double: the numerators sum to the denominator.
            // The weights are invariant to a common scale of the distances, so
            // the wide keys are taken relative to the (k+1)-th.
            const double last = relative_sq(dr[k], dr[k]);
            double d_rel[64];
            std::vector<double> d_rel_heap;
            double* dj = d_rel;
            if (k > 64) {
                d_rel_heap.resize(static_cast<std::size_t>(k));
                dj = d_rel_heap.data();
            }
            for (std::ptrdiff_t j = 0; j < k; ++j) dj[j] = relative_sq(dr[j], dr[k]);
            double denom = 0.0;
            for (std::ptrdiff_t j = 0; j < k; ++j) denom += last - dj[j];
            std::pair<std::int64_t, T> entries[64];
            std::vector<std::pair<std::int64_t, T>> heap_entries;
            std::pair<std::int64_t, T>* e = entries;
            if (k > 64) {
                heap_entries.resize(static_cast<std::size_t>(k));
                e = heap_entries.data();
            }
            for (std::ptrdiff_t j = 0; j < k; ++j) {
                const double w = denom > 0.0 ? (last - dj[j]) / denom
                                             : 1.0 / static_cast<double>(k);
                e[j] = {ir[j], static_cast<T>(w)};
            }
            std::sort(e, e + k, [](const auto& a, const auto& b) { return a.first < b.first; });
            for (std::ptrdiff_t j = 0; j < k; ++j) {
                cols[row * k + j] = e[j].first;
                weights[row * k + j] = e[j].second;
            }
        });
}

template bool knn_anchors<float>(Matrix2D<const float>, Matrix2D<const float>, std::ptrdiff_t,
                                 float*, std::int64_t*, int);
template bool knn_anchors<double>(Matrix2D<const double>, Matrix2D<const double>,
                                  std::ptrdiff_t, double*, std::int64_t*, int);
template bool knn_anchor_graph<float>(Matrix2D<const float>, Matrix2D<const float>,
                                      std::ptrdiff_t, float*, std::int64_t*, int);
template bool knn_anchor_graph<double>(Matrix2D<const double>, Matrix2D<const double>,
                                       std::ptrdiff_t, double*, std::int64_t*, int);

}  // namespace mvlearn_ext
