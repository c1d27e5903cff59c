// The one array convention of the compiled core: a non-owning view of an
// N-dimensional array with strides counted in elements. Pure C++17, no Python.
//
// Every kernel that accepts any memory layout (C, Fortran, strided, negative
// strides) takes views and indexes them with operator(); a kernel that reads
// raw row-major memory (the GP algebra) takes `data` and `shape` of a view
// that the caller has checked to be C-contiguous (`c_contiguous()`). The
// bindings (csrc/bindings/bindings.hpp) make every view from a NumPy array in
// one function that checks the dtype, the number of dimensions, the alignment
// of the strides and, where asked, C-contiguity.
#pragma once

#include <cstddef>

namespace mvlearn_ext {

template <class T, int N>
struct ArrayView {
    static_assert(N >= 1, "an array view has at least one dimension");
    T* data;
    std::ptrdiff_t shape[N];
    std::ptrdiff_t strides[N];  // in elements, may be negative

    // Element (i_0, ..., i_{N-1}); one index per dimension.
    template <class... I>
    T& operator()(I... i) const {
        static_assert(sizeof...(I) == N, "one index per dimension");
        const std::ptrdiff_t index[N] = {static_cast<std::ptrdiff_t>(i)...};
        std::ptrdiff_t offset = 0;
        for (int k = 0; k < N; ++k) offset += index[k] * strides[k];
        return data[offset];
    }

    std::ptrdiff_t size() const {
        std::ptrdiff_t n = 1;
        for (int k = 0; k < N; ++k) n *= shape[k];
        return n;
    }

    // Row-major with no gaps: element (i_0, ..., i_{N-1}) at the flat
    // row-major index (dimensions of extent 1 may have any stride).
    bool c_contiguous() const {
        std::ptrdiff_t expected = 1;
        for (int k = N - 1; k >= 0; --k) {
            if (shape[k] != 1 && strides[k] != expected) return size() == 0;
            expected *= shape[k];
        }
        return true;
    }
};

// A read-only or writable 2-D view (rows, columns): the simplex and
// anchor-graph kernels' argument type.
template <class T>
using Matrix2D = ArrayView<T, 2>;

}  // namespace mvlearn_ext
