// Bindings of the kNN anchor search and the anchor graph (mvlearn_ext/anchor_graph.hpp).
#include <cstdint>

#include "bindings.hpp"
#include "mvlearn_ext/anchor_graph.hpp"

namespace mvlearn_ext {
namespace bindings {

namespace {

template <class T>
void check_pair(const Matrix2D<const T>& X, const Matrix2D<const T>& A) {
    need(X.shape[1] == A.shape[1], "X and anchors must have the same columns");
    need(A.shape[0] >= 1, "anchors must have at least one row");
}

template <class T>
py::tuple knn_anchors_py(const Array<T>& X, const Array<T>& A, py::ssize_t kk, int n_threads) {
    auto xm = view<2>(X, "X");
    auto am = view<2>(A, "anchors");
    check_pair(xm, am);
    need(kk >= 1 && kk <= am.shape[0], "need 1 <= n_neighbors <= n_anchors");
    auto dist = new_array<T>({xm.shape[0], kk});
    auto ind = new_array<std::int64_t>({xm.shape[0], kk});
    T* dp = dist.mutable_data();
    std::int64_t* ip = ind.mutable_data();
    bool ok;
    {
        py::gil_scoped_release release;
        ok = knn_anchors<T>(xm, am, kk, dp, ip, clamp_threads(n_threads));
    }
    return py::make_tuple(ok, dist, ind);
}

template <class T>
py::tuple knn_anchor_graph_py(const Array<T>& X, const Array<T>& A, py::ssize_t k,
                              int n_threads) {
    auto xm = view<2>(X, "X");
    auto am = view<2>(A, "anchors");
    check_pair(xm, am);
    need(k >= 0 && k <= am.shape[0] - 1, "need 0 <= k <= n_anchors - 1");
    const py::ssize_t width = k == 0 ? 1 : k;
    auto weights = new_array<T>({xm.shape[0], width});
    auto cols = new_array<std::int64_t>({xm.shape[0], width});
    T* wp = weights.mutable_data();
    std::int64_t* cp = cols.mutable_data();
    bool ok;
    {
        py::gil_scoped_release release;
        ok = knn_anchor_graph<T>(xm, am, k, wp, cp, clamp_threads(n_threads));
    }
    return py::make_tuple(ok, weights, cols);
}

template <class T>
void bind_typed(py::module_& m) {
    m.def("knn_anchors", &knn_anchors_py<T>, py::arg("X").noconvert(),
          py::arg("anchors").noconvert(), py::arg("n_neighbors"), py::arg("n_threads"),
          "(ok, distances, indices) of the n_neighbors nearest anchors of each row of X.");
    m.def("knn_anchor_graph", &knn_anchor_graph_py<T>, py::arg("X").noconvert(),
          py::arg("anchors").noconvert(), py::arg("n_neighbors"), py::arg("n_threads"),
          "(ok, weights, columns) of the parameter-free kNN anchor graph.");
}

}  // namespace

void bind_anchor_graph(py::module_& m) {
    bind_typed<double>(m);
    bind_typed<float>(m);
}

}  // namespace bindings
}  // namespace mvlearn_ext
