// The binding side of the array convention (mvlearn_ext/array_view.hpp):
// NumPy array -> ArrayView, with the checks that memory safety needs, and the
// declarations of the binding function of each kernel family. Only the files
// of csrc/bindings/ include pybind11; validation with user-facing messages
// lives in the Python facade (mvlearn_ext/_lib/__init__.py), and drivers
// call the kernels through mvlearn_ext/_lib/_kernels.py.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "mvlearn_ext/array_view.hpp"

namespace mvlearn_ext {
namespace bindings {

namespace py = pybind11;

// Every array argument is an Array<T> bound with .noconvert(): the exact
// dtype, no silent copy or conversion, any strides.
template <class T>
using Array = py::array_t<T, 0>;

enum class Layout { Strided, CContiguous };

inline void need(bool cond, const char* msg) {
    if (!cond) throw py::value_error(msg);
}

// The one conversion from a NumPy array to a view: checks the number of
// dimensions, that the strides are whole elements and, for CContiguous,
// that the memory is row-major without gaps. Errors name the argument.
template <int N, class T, class Ptr>
ArrayView<Ptr, N> make_view(const py::array& a, Ptr* data, const char* name, Layout layout) {
    if (a.ndim() != N)
        throw py::value_error(std::string(name) + " must be " + std::to_string(N) + "-D");
    ArrayView<Ptr, N> v{data, {}, {}};
    const auto item = static_cast<py::ssize_t>(sizeof(T));
    for (int k = 0; k < N; ++k) {
        if (a.strides(k) % item != 0)
            throw py::value_error(std::string(name) + " must be aligned to its item size");
        v.shape[k] = a.shape(k);
        v.strides[k] = a.strides(k) / item;
    }
    if (layout == Layout::CContiguous && !v.c_contiguous())
        throw py::value_error(std::string(name) + " must be C-contiguous");
    return v;
}

template <int N, class T>
ArrayView<const T, N> view(const Array<T>& a, const char* name,
                           Layout layout = Layout::Strided) {
    return make_view<N, T, const T>(a, a.data(), name, layout);
}

template <int N, class T>
ArrayView<T, N> mutable_view(Array<T>& a, const char* name, Layout layout = Layout::Strided) {
    if (!a.writeable()) throw py::value_error(std::string(name) + " is read-only");
    return make_view<N, T, T>(a, a.mutable_data(), name, layout);
}

// A new C-contiguous array of the given shape (an output of a kernel).
template <class T>
Array<T> new_array(std::initializer_list<py::ssize_t> shape) {
    return Array<T>(std::vector<py::ssize_t>(shape));
}

inline int clamp_threads(int n_threads) { return n_threads < 1 ? 1 : n_threads; }

// One binding function per kernel family (one source file each).
void bind_simplex(py::module_& m);       // bind_simplex.cpp
void bind_anchor_graph(py::module_& m);  // bind_anchor_graph.cpp
void bind_gp(py::module_& m);            // bind_gp.cpp

}  // namespace bindings
}  // namespace mvlearn_ext
