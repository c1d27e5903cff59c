#include "mvlearn_ext/anchor_graph.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
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

// Run `visit(row, dist, ind)` for every sample with its kk nearest anchors
// sorted ascending. The anchors are transposed once (d x m) so the inner loop
// runs over contiguous anchors with independent accumulators and vectorises
// without reassociating any sum.
template <class T, class Visit>
bool for_each_knn(Matrix2D<const T> X, Matrix2D<const T> A, std::ptrdiff_t kk, int n_threads,
                  Visit&& visit) {
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
                visit(s0 + r, heaps[r].d, heaps[r].i);
            }
        }
    });
    return all_finite.load();
}

}  // namespace

template <class T>
bool knn_anchors(Matrix2D<const T> X, Matrix2D<const T> A, std::ptrdiff_t kk, T* dist,
                 std::int64_t* ind, int n_threads) {
    return for_each_knn<T>(X, A, kk, n_threads,
                           [&](std::ptrdiff_t row, const T* dr, const std::int64_t* ir) {
                               std::copy(dr, dr + kk, dist + row * kk);
                               std::copy(ir, ir + kk, ind + row * kk);
                           });
}

template <class T>
bool knn_anchor_graph(Matrix2D<const T> X, Matrix2D<const T> A, std::ptrdiff_t k, T* weights,
                      std::int64_t* cols, int n_threads) {
    if (k == 0) {
        return for_each_knn<T>(X, A, 1, n_threads,
                               [&](std::ptrdiff_t row, const T*, const std::int64_t* ir) {
                                   weights[row] = T(1);
                                   cols[row] = ir[0];
                               });
    }
    return for_each_knn<T>(
        X, A, k + 1, n_threads, [&](std::ptrdiff_t row, const T* dr, const std::int64_t* ir) {
            // Accumulate in double: the numerators sum to the denominator.
            const double last = static_cast<double>(dr[k]);
            double denom = 0.0;
            for (std::ptrdiff_t j = 0; j < k; ++j) denom += last - static_cast<double>(dr[j]);
            std::pair<std::int64_t, T> entries[64];
            std::vector<std::pair<std::int64_t, T>> heap_entries;
            std::pair<std::int64_t, T>* e = entries;
            if (k > 64) {
                heap_entries.resize(static_cast<std::size_t>(k));
                e = heap_entries.data();
            }
            for (std::ptrdiff_t j = 0; j < k; ++j) {
                const double w = denom > 0.0 ? (last - static_cast<double>(dr[j])) / denom
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
