// Python bindings of the compiled core. This is the only place that sees
// pybind11: it checks shapes and dtypes, marshals arrays and releases the GIL.
// Validation with user-facing messages lives in the Python facade
// (mvlearn_ext/_lib/__init__.py); these checks only guard memory safety.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "mvlearn_ext/anchor_graph.hpp"
#include "mvlearn_ext/parallel.hpp"
#include "mvlearn_ext/simplex.hpp"

namespace py = pybind11;
namespace mx = mvlearn_ext;

namespace {

template <class T>
using Array = py::array_t<T, 0>;  // exact dtype, no conversion, any strides

template <class T, class Ptr>
mx::Matrix2D<Ptr> as_matrix(const py::array& a, Ptr* data, const char* name) {
    if (a.ndim() != 2) throw py::value_error(std::string(name) + " must be 2-D");
    const auto item = static_cast<py::ssize_t>(sizeof(T));
    if (a.strides(0) % item != 0 || a.strides(1) % item != 0)
        throw py::value_error(std::string(name) + " must be aligned to its item size");
    return {data, a.shape(0), a.shape(1), a.strides(0) / item, a.strides(1) / item};
}

int clamp_threads(int n_threads) { return n_threads < 1 ? 1 : n_threads; }

template <class T>
bool project_simplex(const Array<T>& x, Array<T>& out, double scale, int n_threads) {
    auto in = as_matrix<T, const T>(x, x.data(), "x");
    auto o = as_matrix<T, T>(out, out.mutable_data(), "out");
    if (in.rows != o.rows || in.cols != o.cols)
        throw py::value_error("out must have the shape of x");
    if (!(scale > 0.0)) throw py::value_error("scale must be > 0");
    py::gil_scoped_release release;
    return mx::project_rows_simplex<T>(in, o, scale, clamp_threads(n_threads));
}

template <class T>
void check_pair(const mx::Matrix2D<const T>& X, const mx::Matrix2D<const T>& A) {
    if (X.cols != A.cols) throw py::value_error("X and anchors must have the same columns");
    if (A.rows < 1) throw py::value_error("anchors must have at least one row");
}

template <class T>
py::tuple knn_anchors(const Array<T>& X, const Array<T>& A, py::ssize_t kk, int n_threads) {
    auto xm = as_matrix<T, const T>(X, X.data(), "X");
    auto am = as_matrix<T, const T>(A, A.data(), "anchors");
    check_pair(xm, am);
    if (kk < 1 || kk > am.rows) throw py::value_error("need 1 <= n_neighbors <= n_anchors");
    Array<T> dist({xm.rows, kk});
    Array<std::int64_t> ind({xm.rows, kk});
    T* dp = dist.mutable_data();
    std::int64_t* ip = ind.mutable_data();
    bool ok;
    {
        py::gil_scoped_release release;
        ok = mx::knn_anchors<T>(xm, am, kk, dp, ip, clamp_threads(n_threads));
    }
    return py::make_tuple(ok, dist, ind);
}

template <class T>
py::tuple knn_anchor_graph(const Array<T>& X, const Array<T>& A, py::ssize_t k, int n_threads) {
    auto xm = as_matrix<T, const T>(X, X.data(), "X");
    auto am = as_matrix<T, const T>(A, A.data(), "anchors");
    check_pair(xm, am);
    if (k < 0 || k > am.rows - 1) throw py::value_error("need 0 <= k <= n_anchors - 1");
    const py::ssize_t width = k == 0 ? 1 : k;
    Array<T> weights({xm.rows, width});
    Array<std::int64_t> cols({xm.rows, width});
    T* wp = weights.mutable_data();
    std::int64_t* cp = cols.mutable_data();
    bool ok;
    {
        py::gil_scoped_release release;
        ok = mx::knn_anchor_graph<T>(xm, am, k, wp, cp, clamp_threads(n_threads));
    }
    return py::make_tuple(ok, weights, cols);
}

template <class T>
void bind_typed(py::module_& m) {
    m.def("project_simplex", &project_simplex<T>, py::arg("x").noconvert(),
          py::arg("out").noconvert(), py::arg("scale"), py::arg("n_threads"),
          "Project each row of x onto {z >= 0, sum z = scale}, into out (may alias x). "
          "Returns False if x holds a non-finite value.");
    m.def("knn_anchors", &knn_anchors<T>, py::arg("X").noconvert(),
          py::arg("anchors").noconvert(), py::arg("n_neighbors"), py::arg("n_threads"),
          "(ok, sq_dist, indices) of the n_neighbors nearest anchors of each row of X.");
    m.def("knn_anchor_graph", &knn_anchor_graph<T>, py::arg("X").noconvert(),
          py::arg("anchors").noconvert(), py::arg("n_neighbors"), py::arg("n_threads"),
          "(ok, weights, columns) of the parameter-free kNN anchor graph.");
}

}  // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "Private compiled core of mvlearn_ext (use the mvlearn_ext._lib facade).";
    bind_typed<double>(m);
    bind_typed<float>(m);
    m.def("hardware_threads", &mx::hardware_threads, "Hardware threads seen by the core.");
    m.def("build_info", [] {
        py::dict d;
        d["version"] = MVLEARN_EXT_VERSION_INFO;
#if defined(__clang__)
        d["compiler"] = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
        d["compiler"] = std::string("gcc ") + __VERSION__;
#else
        d["compiler"] = std::string("unknown");
#endif
        d["cplusplus"] = static_cast<long>(__cplusplus);
#if defined(__AVX2__)
        d["baseline_simd"] = "avx2";
#elif defined(__SSE2__)
        d["baseline_simd"] = "sse2";
#else
        d["baseline_simd"] = "none";
#endif
        // The instruction set the multi-versioned distance kernel runs with.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(MVLEARN_EXT_NO_CLONES)
        __builtin_cpu_init();
        d["distance_kernel_isa"] = __builtin_cpu_supports("avx512f") ? "avx512f"
                                   : __builtin_cpu_supports("avx2") ? "avx2"
                                                                    : "default";
#else
        d["distance_kernel_isa"] = "default";
#endif
        d["threads"] = "std::thread";
        d["hardware_threads"] = mx::hardware_threads();
        return d;
    });
}
