// Python bindings of the compiled core. This is the only place that sees
// pybind11: it checks shapes and dtypes, marshals arrays and releases the GIL.
// Validation with user-facing messages lives in the Python facade
// (mvlearn_ext/_lib/__init__.py); these checks only guard memory safety.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "mvlearn_ext/anchor_graph.hpp"
#include "mvlearn_ext/gp.hpp"
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

// ------------------------------------------------------------------ GP
// Sparse multi-output GP algebra (mvlearn_ext/gp.hpp). Every argument is a
// C-contiguous float64 array (the facade in mvlearn_ext/gaussian_process/
// _linalg.py converts); shapes are checked here for memory safety only.
using CArr = py::array_t<double, py::array::c_style>;

void need(bool cond, const char* msg) {
    if (!cond) throw py::value_error(msg);
}

CArr new_array(std::initializer_list<py::ssize_t> shape) {
    return CArr(std::vector<py::ssize_t>(shape));
}

CArr gp_kron_mv(const CArr& A, const CArr& B, const CArr& X, int n_threads) {
    need(A.ndim() == 2 && B.ndim() == 2 && X.ndim() == 2, "A, B and X must be 2-D");
    need(X.shape(0) == B.shape(1) && X.shape(1) == A.shape(1),
         "X must have shape (B.shape[1], A.shape[1])");
    CArr out = new_array({B.shape(0), A.shape(0)});
    double* o = out.mutable_data();
    py::gil_scoped_release release;
    mx::gp::kron_mv(A.data(), A.shape(0), A.shape(1), B.data(), B.shape(0), B.shape(1), X.data(),
                    o, clamp_threads(n_threads));
    return out;
}

py::tuple gp_kron_mv_vjp(const CArr& A, const CArr& B, const CArr& X, const CArr& Ybar,
                         int n_threads) {
    need(A.ndim() == 2 && B.ndim() == 2 && X.ndim() == 2 && Ybar.ndim() == 2,
         "A, B, X and Ybar must be 2-D");
    need(X.shape(0) == B.shape(1) && X.shape(1) == A.shape(1),
         "X must have shape (B.shape[1], A.shape[1])");
    need(Ybar.shape(0) == B.shape(0) && Ybar.shape(1) == A.shape(0),
         "Ybar must have shape (B.shape[0], A.shape[0])");
    CArr Xb = new_array({X.shape(0), X.shape(1)});
    CArr Ab = new_array({A.shape(0), A.shape(1)});
    CArr Bb = new_array({B.shape(0), B.shape(1)});
    double *xb = Xb.mutable_data(), *ab = Ab.mutable_data(), *bb = Bb.mutable_data();
    {
        py::gil_scoped_release release;
        mx::gp::kron_mv_vjp(A.data(), A.shape(0), A.shape(1), B.data(), B.shape(0), B.shape(1),
                            X.data(), Ybar.data(), xb, ab, bb, clamp_threads(n_threads));
    }
    return py::make_tuple(Xb, Ab, Bb);
}

void check_square(const CArr& A, const char* msg) {
    need(A.ndim() == 2 && A.shape(0) == A.shape(1), msg);
}

py::tuple gp_kron_solve(const CArr& A, const CArr& B, const CArr& X) {
    check_square(A, "A must be square");
    check_square(B, "B must be square");
    need(X.ndim() == 2 && X.shape(0) == B.shape(0) && X.shape(1) == A.shape(0),
         "X must have shape (B.shape[0], A.shape[0])");
    CArr Z = new_array({X.shape(0), X.shape(1)});
    double* z = Z.mutable_data();
    bool ok;
    {
        py::gil_scoped_release release;
        ok = mx::gp::kron_solve(A.data(), A.shape(0), B.data(), B.shape(0), X.data(), z);
    }
    return py::make_tuple(ok, Z);
}

py::tuple gp_kron_solve_vjp(const CArr& A, const CArr& B, const CArr& Z, const CArr& Zbar) {
    check_square(A, "A must be square");
    check_square(B, "B must be square");
    need(Z.ndim() == 2 && Z.shape(0) == B.shape(0) && Z.shape(1) == A.shape(0),
         "Z must have shape (B.shape[0], A.shape[0])");
    need(Zbar.ndim() == 2 && Zbar.shape(0) == Z.shape(0) && Zbar.shape(1) == Z.shape(1),
         "Zbar must have the shape of Z");
    CArr Xb = new_array({Z.shape(0), Z.shape(1)});
    CArr Ab = new_array({A.shape(0), A.shape(0)});
    CArr Bb = new_array({B.shape(0), B.shape(0)});
    double *xb = Xb.mutable_data(), *ab = Ab.mutable_data(), *bb = Bb.mutable_data();
    bool ok;
    {
        py::gil_scoped_release release;
        ok = mx::gp::kron_solve_vjp(A.data(), A.shape(0), B.data(), B.shape(0), Z.data(),
                                    Zbar.data(), xb, ab, bb);
    }
    return py::make_tuple(ok, Xb, Ab, Bb);
}

py::tuple gp_kron_logdet(const CArr& A, const CArr& B) {
    check_square(A, "A must be square");
    check_square(B, "B must be square");
    CArr Ai = new_array({A.shape(0), A.shape(0)});
    CArr Bi = new_array({B.shape(0), B.shape(0)});
    double *ai = Ai.mutable_data(), *bi = Bi.mutable_data();
    double ld = 0.0;
    bool ok;
    {
        py::gil_scoped_release release;
        ok = mx::gp::kron_logdet(A.data(), A.shape(0), B.data(), B.shape(0), &ld, ai, bi);
    }
    return py::make_tuple(ok, ld, Ai, Bi);
}

void check_psi_args(const CArr& mu, const CArr& S, const CArr& Z, const CArr& ls) {
    need(mu.ndim() == 2 && S.ndim() == 2 && Z.ndim() == 2 && ls.ndim() == 1,
         "mu, S, Z must be 2-D and lengthscales 1-D");
    need(S.shape(0) == mu.shape(0) && S.shape(1) == mu.shape(1), "S must have the shape of mu");
    need(Z.shape(1) == mu.shape(1) && ls.shape(0) == mu.shape(1),
         "Z and lengthscales must have mu.shape[1] columns");
}

py::tuple gp_rbf_psi_stats(const CArr& mu, const CArr& S, const CArr& Z, const CArr& ls,
                           bool with_psi2, int n_threads) {
    check_psi_args(mu, S, Z, ls);
    const py::ssize_t P = mu.shape(0), D = mu.shape(1), M = Z.shape(0);
    CArr psi1 = new_array({P, M});
    CArr psi2 = with_psi2 ? new_array({P, M, M}) : new_array({0, M, M});
    double *p1 = psi1.mutable_data(), *p2 = with_psi2 ? psi2.mutable_data() : nullptr;
    {
        py::gil_scoped_release release;
        mx::gp::rbf_psi_stats(mu.data(), S.data(), P, D, Z.data(), M, ls.data(), p1, p2,
                              clamp_threads(n_threads));
    }
    return py::make_tuple(psi1, psi2);
}

py::tuple gp_rbf_psi_stats_vjp(const CArr& mu, const CArr& S, const CArr& Z, const CArr& ls,
                               const CArr& psi1bar, const CArr& psi2bar, int n_threads) {
    check_psi_args(mu, S, Z, ls);
    const py::ssize_t P = mu.shape(0), D = mu.shape(1), M = Z.shape(0);
    const bool has1 = psi1bar.size() > 0, has2 = psi2bar.size() > 0;
    if (has1) need(psi1bar.ndim() == 2 && psi1bar.shape(0) == P && psi1bar.shape(1) == M,
                   "psi1bar must have shape (P, M) or be empty");
    if (has2) need(psi2bar.ndim() == 3 && psi2bar.shape(0) == P && psi2bar.shape(1) == M &&
                       psi2bar.shape(2) == M,
                   "psi2bar must have shape (P, M, M) or be empty");
    CArr mb = new_array({P, D}), sb = new_array({P, D}), zb = new_array({M, D});
    CArr lb = new_array({D});
    double *m = mb.mutable_data(), *s = sb.mutable_data(), *z = zb.mutable_data(),
           *l = lb.mutable_data();
    const double* g1 = has1 ? psi1bar.data() : nullptr;
    const double* g2 = has2 ? psi2bar.data() : nullptr;
    {
        py::gil_scoped_release release;
        mx::gp::rbf_psi_stats_vjp(mu.data(), S.data(), P, D, Z.data(), M, ls.data(), g1, g2, m,
                                  s, z, l, clamp_threads(n_threads));
    }
    return py::make_tuple(mb, sb, zb, lb);
}

py::tuple gp_masked_output_stats(const CArr& Yt, const CArr& G, const CArr& W, int n_threads) {
    need(Yt.ndim() == 2 && G.ndim() == 2 && W.ndim() == 2, "Yt, G and W must be 2-D");
    const py::ssize_t P = Yt.shape(0), N = Yt.shape(1), K = G.shape(1), J = W.shape(1);
    need(G.shape(0) == N && W.shape(0) == N, "G and W must have Yt.shape[1] rows");
    CArr Dst = new_array({P, K, K}), E = new_array({P, K}), C = new_array({P, J});
    CArr cnt = new_array({P}), ysq = new_array({P});
    double *d = Dst.mutable_data(), *e = E.mutable_data(), *c = C.mutable_data(),
           *n = cnt.mutable_data(), *y = ysq.mutable_data();
    bool ok;
    {
        py::gil_scoped_release release;
        ok = mx::gp::masked_output_stats(Yt.data(), P, N, G.data(), K, W.data(), J, d, e, c, n,
                                         y, clamp_threads(n_threads));
    }
    return py::make_tuple(ok, Dst, E, C, cnt, ysq);
}

py::tuple gp_masked_output_stats_vjp(const CArr& Yt, const CArr& G, py::ssize_t J,
                                     const CArr& Dbar, const CArr& Ebar, const CArr& Cbar,
                                     int n_threads) {
    need(Yt.ndim() == 2 && G.ndim() == 2, "Yt and G must be 2-D");
    const py::ssize_t P = Yt.shape(0), N = Yt.shape(1), K = G.shape(1);
    need(G.shape(0) == N, "G must have Yt.shape[1] rows");
    need(J >= 0, "J must be >= 0");
    const bool hd = Dbar.size() > 0, he = Ebar.size() > 0, hc = Cbar.size() > 0;
    if (hd) need(Dbar.ndim() == 3 && Dbar.shape(0) == P && Dbar.shape(1) == K &&
                     Dbar.shape(2) == K,
                 "Dbar must have shape (P, K, K) or be empty");
    if (he) need(Ebar.ndim() == 2 && Ebar.shape(0) == P && Ebar.shape(1) == K,
                 "Ebar must have shape (P, K) or be empty");
    if (hc) need(Cbar.ndim() == 2 && Cbar.shape(0) == P && Cbar.shape(1) == J,
                 "Cbar must have shape (P, J) or be empty");
    CArr Gb = new_array({N, K}), Wb = new_array({N, J});
    double *gb = Gb.mutable_data(), *wb = Wb.mutable_data();
    {
        py::gil_scoped_release release;
        mx::gp::masked_output_stats_vjp(Yt.data(), P, N, G.data(), K, J,
                                        hd ? Dbar.data() : nullptr, he ? Ebar.data() : nullptr,
                                        hc ? Cbar.data() : nullptr, gb, J > 0 ? wb : nullptr,
                                        clamp_threads(n_threads));
    }
    return py::make_tuple(Gb, Wb);
}

CArr gp_pattern_sum(const py::array_t<std::int64_t, py::array::c_style>& indptr,
                    const py::array_t<std::int64_t, py::array::c_style>& indices, const CArr& V,
                    int n_threads) {
    need(indptr.ndim() == 1 && indptr.shape(0) >= 1, "indptr must be 1-D and non-empty");
    need(indices.ndim() == 1 && V.ndim() == 2, "indices must be 1-D and V 2-D");
    const py::ssize_t R = indptr.shape(0) - 1, K = V.shape(1), C = V.shape(0);
    const std::int64_t* ip = indptr.data();
    const std::int64_t* ix = indices.data();
    need(ip[0] == 0 && ip[R] == indices.shape(0), "indptr must run from 0 to len(indices)");
    for (py::ssize_t r = 0; r < R; ++r) need(ip[r] <= ip[r + 1], "indptr must be non-decreasing");
    for (py::ssize_t k = 0; k < indices.shape(0); ++k)
        need(ix[k] >= 0 && ix[k] < C, "indices must lie in [0, V.shape[0])");
    CArr out = new_array({R, K});
    double* o = out.mutable_data();
    {
        py::gil_scoped_release release;
        mx::gp::pattern_sum(ip, R, ix, V.data(), K, o, clamp_threads(n_threads));
    }
    return out;
}

void bind_gp(py::module_& m) {
    m.def("gp_kron_mv", &gp_kron_mv, py::arg("A").noconvert(), py::arg("B").noconvert(),
          py::arg("X").noconvert(), py::arg("n_threads"),
          "B @ X @ A.T, i.e. (A kron B) vec(X) with column-major vec.");
    m.def("gp_kron_mv_vjp", &gp_kron_mv_vjp, py::arg("A").noconvert(), py::arg("B").noconvert(),
          py::arg("X").noconvert(), py::arg("Ybar").noconvert(), py::arg("n_threads"),
          "(Xbar, Abar, Bbar): vector-Jacobian product of gp_kron_mv.");
    m.def("gp_kron_solve", &gp_kron_solve, py::arg("A").noconvert(), py::arg("B").noconvert(),
          py::arg("X").noconvert(), "(ok, B^-1 X A^-1) for SPD A, B.");
    m.def("gp_kron_solve_vjp", &gp_kron_solve_vjp, py::arg("A").noconvert(),
          py::arg("B").noconvert(), py::arg("Z").noconvert(), py::arg("Zbar").noconvert(),
          "(ok, Xbar, Abar, Bbar): vector-Jacobian product of gp_kron_solve.");
    m.def("gp_kron_logdet", &gp_kron_logdet, py::arg("A").noconvert(), py::arg("B").noconvert(),
          "(ok, log|A kron B|, A^-1, B^-1) for SPD A, B.");
    m.def("gp_rbf_psi_stats", &gp_rbf_psi_stats, py::arg("mu").noconvert(),
          py::arg("S").noconvert(), py::arg("Z").noconvert(), py::arg("lengthscales").noconvert(),
          py::arg("with_psi2"), py::arg("n_threads"),
          "(psi1 (P, M), psi2 (P, M, M)) of the unit-variance ARD-RBF kernel.");
    m.def("gp_rbf_psi_stats_vjp", &gp_rbf_psi_stats_vjp, py::arg("mu").noconvert(),
          py::arg("S").noconvert(), py::arg("Z").noconvert(), py::arg("lengthscales").noconvert(),
          py::arg("psi1bar").noconvert(), py::arg("psi2bar").noconvert(), py::arg("n_threads"),
          "(mubar, Sbar, Zbar, lsbar): vector-Jacobian product of gp_rbf_psi_stats.");
    m.def("gp_masked_output_stats", &gp_masked_output_stats, py::arg("Yt").noconvert(),
          py::arg("G").noconvert(), py::arg("W").noconvert(), py::arg("n_threads"),
          "(ok, D, E, C, count, ysq): per-output statistics over the non-NaN entries of Yt.");
    m.def("gp_masked_output_stats_vjp", &gp_masked_output_stats_vjp, py::arg("Yt").noconvert(),
          py::arg("G").noconvert(), py::arg("J"), py::arg("Dbar").noconvert(),
          py::arg("Ebar").noconvert(), py::arg("Cbar").noconvert(), py::arg("n_threads"),
          "(Gbar, Wbar): vector-Jacobian product of gp_masked_output_stats.");
    m.def("gp_pattern_sum", &gp_pattern_sum, py::arg("indptr").noconvert(),
          py::arg("indices").noconvert(), py::arg("V").noconvert(), py::arg("n_threads"),
          "out[r] = sum of the rows V[indices[indptr[r]:indptr[r + 1]]].");
}

}  // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "Private compiled core of mvlearn_ext (use the mvlearn_ext._lib facade).";
    bind_typed<double>(m);
    bind_typed<float>(m);
    bind_gp(m);
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
