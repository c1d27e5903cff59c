// Euclidean projection onto the (scaled) probability simplex
//   Delta_s = { z in R^m : z >= 0, sum(z) = s },  s > 0,
// applied to every row of a strided 2-D array. Pure C++17, no Python.
#pragma once

#include <cstddef>

#include "mvlearn_ext/array_view.hpp"

namespace mvlearn_ext {

// Project each row of `in` onto Delta_s and write it to the same row of
// `out` (which may alias `in`). Uses up to `n_threads` threads.
// Returns false, and leaves the rows that contain them unspecified, if the
// input holds a NaN or an infinity.
template <class T>
bool project_rows_simplex(Matrix2D<const T> in, Matrix2D<T> out, double s, int n_threads);

// The threshold tau of one contiguous vector q of length m: the projection
// is max(q - tau, 0). `work` must hold 2*m doubles; q[start] must be a
// maximum of q. Rounding errors scale with max|q|, so callers pass q shifted
// by its maximum (as project_rows_simplex does) for errors that scale with s.
double simplex_threshold(const double* q, std::ptrdiff_t m, double s, double* work,
                         std::ptrdiff_t start = 0);

}  // namespace mvlearn_ext
