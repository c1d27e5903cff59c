// k nearest anchors by squared Euclidean distance, and the parameter-free
// anchor weights of Nie, Wang & Huang (KDD 2014). Pure C++17, no Python.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mvlearn_ext/simplex.hpp"

namespace mvlearn_ext {

// For every row i of X (n x d), the `kk` anchors (rows of A, m x d) with the
// smallest distance, sorted by (distance, anchor index): ties go to the lower
// anchor index. Writes n x kk row-major Euclidean distances `dist` and
// indices `ind`. Requires 1 <= kk <= m. Squared distances are sums of squared
// differences (no cancellation), computed tile by tile with a bounded heap
// per sample, so the memory is O(n * kk), never O(n * m). A sample whose
// sums overflow or underflow in T is searched again with every difference
// scaled by a power of two (an exact scaling), so any finite input gets the
// right neighbours, and a distance that is finite in T. Returns false if X or
// A holds a non-finite value (the outputs are then unspecified).
template <class T>
bool knn_anchors(Matrix2D<const T> X, Matrix2D<const T> A, std::ptrdiff_t kk, T* dist,
                 std::int64_t* ind, int n_threads);

// The anchor graph: for each sample, its k nearest anchors with the
// parameter-free weights. With sorted distances d_1 <= ... <= d_{k+1},
//   w_j = (d_{k+1} - d_j) / sum_{h<=k} (d_{k+1} - d_h),   j = 1..k;
// w_j = 1/k when that denominator is zero (the k+1 nearest anchors are
// equidistant). With k == 0 each sample gets weight 1 on its nearest anchor
// (the only sensible graph when m == 1). Requires 0 <= k <= m - 1.
// Writes n x max(k, 1) row-major `weights` and `cols`, each row sorted by
// anchor index (canonical CSR order). Scale-safe as knn_anchors. Returns
// false on non-finite input.
template <class T>
bool knn_anchor_graph(Matrix2D<const T> X, Matrix2D<const T> A, std::ptrdiff_t k, T* weights,
                      std::int64_t* cols, int n_threads);

}  // namespace mvlearn_ext
