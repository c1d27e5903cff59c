// Bindings of the sparse multi-output GP algebra (mvlearn_ext/gp.hpp). The
// kernels read raw row-major float64 memory, so every array is viewed with
// Layout::CContiguous (the unchecked entries in mvlearn_ext/_lib/_kernels.py
// pass C-contiguous arrays); shapes are checked here for memory safety only.
#include <cstdint>

#include "bindings.hpp"
#include "mvlearn_ext/gp.hpp"

namespace mvlearn_ext {
namespace bindings {

namespace {

using D = Array<double>;
constexpr Layout C = Layout::CContiguous;

template <int N>
ArrayView<const double, N> cview(const D& a, const char* name) {
    return view<N>(a, name, C);
}

D gp_kron_mv(const D& A_, const D& B_, const D& X_, int n_threads) {
    auto A = cview<2>(A_, "A"), B = cview<2>(B_, "B"), X = cview<2>(X_, "X");
    need(X.shape[0] == B.shape[1] && X.shape[1] == A.shape[1],
         "X must have shape (B.shape[1], A.shape[1])");
    D out = new_array<double>({B.shape[0], A.shape[0]});
    double* o = out.mutable_data();
    py::gil_scoped_release release;
    gp::kron_mv(A.data, A.shape[0], A.shape[1], B.data, B.shape[0], B.shape[1], X.data, o,
                clamp_threads(n_threads));
    return out;
}

py::tuple gp_kron_mv_vjp(const D& A_, const D& B_, const D& X_, const D& Ybar_,
                         int n_threads) {
    auto A = cview<2>(A_, "A"), B = cview<2>(B_, "B"), X = cview<2>(X_, "X");
    auto Ybar = cview<2>(Ybar_, "Ybar");
    need(X.shape[0] == B.shape[1] && X.shape[1] == A.shape[1],
         "X must have shape (B.shape[1], A.shape[1])");
    need(Ybar.shape[0] == B.shape[0] && Ybar.shape[1] == A.shape[0],
         "Ybar must have shape (B.shape[0], A.shape[0])");
    D Xb = new_array<double>({X.shape[0], X.shape[1]});
    D Ab = new_array<double>({A.shape[0], A.shape[1]});
    D Bb = new_array<double>({B.shape[0], B.shape[1]});
    double *xb = Xb.mutable_data(), *ab = Ab.mutable_data(), *bb = Bb.mutable_data();
    {
        py::gil_scoped_release release;
        gp::kron_mv_vjp(A.data, A.shape[0], A.shape[1], B.data, B.shape[0], B.shape[1], X.data,
                        Ybar.data, xb, ab, bb, clamp_threads(n_threads));
    }
    return py::make_tuple(Xb, Ab, Bb);
}

ArrayView<const double, 2> square(const D& a, const char* name, const char* msg) {
    auto v = cview<2>(a, name);
    need(v.shape[0] == v.shape[1], msg);
    return v;
}

py::tuple gp_kron_solve(const D& A_, const D& B_, const D& X_) {
    auto A = square(A_, "A", "A must be square"), B = square(B_, "B", "B must be square");
    auto X = cview<2>(X_, "X");
    need(X.shape[0] == B.shape[0] && X.shape[1] == A.shape[0],
         "X must have shape (B.shape[0], A.shape[0])");
    D Z = new_array<double>({X.shape[0], X.shape[1]});
    double* z = Z.mutable_data();
    bool ok;
    {
        py::gil_scoped_release release;
        ok = gp::kron_solve(A.data, A.shape[0], B.data, B.shape[0], X.data, z);
    }
    return py::make_tuple(ok, Z);
}

py::tuple gp_kron_solve_vjp(const D& A_, const D& B_, const D& Z_, const D& Zbar_) {
    auto A = square(A_, "A", "A must be square"), B = square(B_, "B", "B must be square");
    auto Z = cview<2>(Z_, "Z"), Zbar = cview<2>(Zbar_, "Zbar");
    need(Z.shape[0] == B.shape[0] && Z.shape[1] == A.shape[0],
         "Z must have shape (B.shape[0], A.shape[0])");
    need(Zbar.shape[0] == Z.shape[0] && Zbar.shape[1] == Z.shape[1],
         "Zbar must have the shape of Z");
    D Xb = new_array<double>({Z.shape[0], Z.shape[1]});
    D Ab = new_array<double>({A.shape[0], A.shape[0]});
    D Bb = new_array<double>({B.shape[0], B.shape[0]});
    double *xb = Xb.mutable_data(), *ab = Ab.mutable_data(), *bb = Bb.mutable_data();
    bool ok;
    {
        py::gil_scoped_release release;
        ok = gp::kron_solve_vjp(A.data, A.shape[0], B.data, B.shape[0], Z.data, Zbar.data, xb,
                                ab, bb);
    }
    return py::make_tuple(ok, Xb, Ab, Bb);
}

py::tuple gp_kron_logdet(const D& A_, const D& B_) {
    auto A = square(A_, "A", "A must be square"), B = square(B_, "B", "B must be square");
    D Ai = new_array<double>({A.shape[0], A.shape[0]});
    D Bi = new_array<double>({B.shape[0], B.shape[0]});
    double *ai = Ai.mutable_data(), *bi = Bi.mutable_data();
    double ld = 0.0;
    bool ok;
    {
        py::gil_scoped_release release;
        ok = gp::kron_logdet(A.data, A.shape[0], B.data, B.shape[0], &ld, ai, bi);
    }
    return py::make_tuple(ok, ld, Ai, Bi);
}

struct PsiArgs {
    ArrayView<const double, 2> mu, S, Z;
    ArrayView<const double, 1> ls;
};

PsiArgs psi_args(const D& mu_, const D& S_, const D& Z_, const D& ls_) {
    PsiArgs a{cview<2>(mu_, "mu"), cview<2>(S_, "S"), cview<2>(Z_, "Z"),
              cview<1>(ls_, "lengthscales")};
    need(a.S.shape[0] == a.mu.shape[0] && a.S.shape[1] == a.mu.shape[1],
         "S must have the shape of mu");
    need(a.Z.shape[1] == a.mu.shape[1] && a.ls.shape[0] == a.mu.shape[1],
         "Z and lengthscales must have mu.shape[1] columns");
    return a;
}

py::tuple gp_rbf_psi_stats(const D& mu_, const D& S_, const D& Z_, const D& ls_,
                           bool with_psi2, int n_threads) {
    const PsiArgs a = psi_args(mu_, S_, Z_, ls_);
    const py::ssize_t P = a.mu.shape[0], Dm = a.mu.shape[1], M = a.Z.shape[0];
    D psi1 = new_array<double>({P, M});
    D psi2 = with_psi2 ? new_array<double>({P, M, M}) : new_array<double>({0, M, M});
    double *p1 = psi1.mutable_data(), *p2 = with_psi2 ? psi2.mutable_data() : nullptr;
    {
        py::gil_scoped_release release;
        gp::rbf_psi_stats(a.mu.data, a.S.data, P, Dm, a.Z.data, M, a.ls.data, p1, p2,
                          clamp_threads(n_threads));
    }
    return py::make_tuple(psi1, psi2);
}

py::tuple gp_rbf_psi_stats_vjp(const D& mu_, const D& S_, const D& Z_, const D& ls_,
                               const D& psi1bar_, const D& psi2bar_, int n_threads) {
    const PsiArgs a = psi_args(mu_, S_, Z_, ls_);
    const py::ssize_t P = a.mu.shape[0], Dm = a.mu.shape[1], M = a.Z.shape[0];
    const bool has1 = psi1bar_.size() > 0, has2 = psi2bar_.size() > 0;
    const double *g1 = nullptr, *g2 = nullptr;
    if (has1) {
        auto v = cview<2>(psi1bar_, "psi1bar");
        need(v.shape[0] == P && v.shape[1] == M, "psi1bar must have shape (P, M) or be empty");
        g1 = v.data;
    }
    if (has2) {
        auto v = cview<3>(psi2bar_, "psi2bar");
        need(v.shape[0] == P && v.shape[1] == M && v.shape[2] == M,
             "psi2bar must have shape (P, M, M) or be empty");
        g2 = v.data;
    }
    D mb = new_array<double>({P, Dm}), sb = new_array<double>({P, Dm});
    D zb = new_array<double>({M, Dm}), lb = new_array<double>({Dm});
    double *m = mb.mutable_data(), *s = sb.mutable_data(), *z = zb.mutable_data(),
           *l = lb.mutable_data();
    {
        py::gil_scoped_release release;
        gp::rbf_psi_stats_vjp(a.mu.data, a.S.data, P, Dm, a.Z.data, M, a.ls.data, g1, g2, m, s,
                              z, l, clamp_threads(n_threads));
    }
    return py::make_tuple(mb, sb, zb, lb);
}

py::tuple gp_masked_output_stats(const D& Yt_, const D& G_, const D& W_, int n_threads) {
    auto Yt = cview<2>(Yt_, "Yt"), G = cview<2>(G_, "G"), W = cview<2>(W_, "W");
    const py::ssize_t P = Yt.shape[0], N = Yt.shape[1], K = G.shape[1], J = W.shape[1];
    need(G.shape[0] == N && W.shape[0] == N, "G and W must have Yt.shape[1] rows");
    D Dst = new_array<double>({P, K, K}), E = new_array<double>({P, K});
    D Cs = new_array<double>({P, J}), cnt = new_array<double>({P}), ysq = new_array<double>({P});
    double *d = Dst.mutable_data(), *e = E.mutable_data(), *c = Cs.mutable_data(),
           *n = cnt.mutable_data(), *y = ysq.mutable_data();
    bool ok;
    {
        py::gil_scoped_release release;
        ok = gp::masked_output_stats(Yt.data, P, N, G.data, K, W.data, J, d, e, c, n, y,
                                     clamp_threads(n_threads));
    }
    return py::make_tuple(ok, Dst, E, Cs, cnt, ysq);
}

py::tuple gp_masked_output_stats_vjp(const D& Yt_, const D& G_, py::ssize_t J, const D& Dbar_,
                                     const D& Ebar_, const D& Cbar_, int n_threads) {
    auto Yt = cview<2>(Yt_, "Yt"), G = cview<2>(G_, "G");
    const py::ssize_t P = Yt.shape[0], N = Yt.shape[1], K = G.shape[1];
    need(G.shape[0] == N, "G must have Yt.shape[1] rows");
    need(J >= 0, "J must be >= 0");
    const double *db = nullptr, *eb = nullptr, *cb = nullptr;
    if (Dbar_.size() > 0) {
        auto v = cview<3>(Dbar_, "Dbar");
        need(v.shape[0] == P && v.shape[1] == K && v.shape[2] == K,
             "Dbar must have shape (P, K, K) or be empty");
        db = v.data;
    }
    if (Ebar_.size() > 0) {
        auto v = cview<2>(Ebar_, "Ebar");
        need(v.shape[0] == P && v.shape[1] == K, "Ebar must have shape (P, K) or be empty");
        eb = v.data;
    }
    if (Cbar_.size() > 0) {
        auto v = cview<2>(Cbar_, "Cbar");
        need(v.shape[0] == P && v.shape[1] == J, "Cbar must have shape (P, J) or be empty");
        cb = v.data;
    }
    D Gb = new_array<double>({N, K}), Wb = new_array<double>({N, J});
    double *gb = Gb.mutable_data(), *wb = Wb.mutable_data();
    {
        py::gil_scoped_release release;
        gp::masked_output_stats_vjp(Yt.data, P, N, G.data, K, J, db, eb, cb, gb,
                                    J > 0 ? wb : nullptr, clamp_threads(n_threads));
    }
    return py::make_tuple(Gb, Wb);
}

D gp_pattern_sum(const Array<std::int64_t>& indptr_, const Array<std::int64_t>& indices_,
                 const D& V_, int n_threads) {
    auto indptr = view<1>(indptr_, "indptr", C), indices = view<1>(indices_, "indices", C);
    auto V = cview<2>(V_, "V");
    need(indptr.shape[0] >= 1, "indptr must be non-empty");
    const py::ssize_t R = indptr.shape[0] - 1, K = V.shape[1], Cn = V.shape[0];
    const std::int64_t* ip = indptr.data;
    const std::int64_t* ix = indices.data;
    need(ip[0] == 0 && ip[R] == indices.shape[0], "indptr must run from 0 to len(indices)");
    for (py::ssize_t r = 0; r < R; ++r) need(ip[r] <= ip[r + 1], "indptr must be non-decreasing");
    for (py::ssize_t k = 0; k < indices.shape[0]; ++k)
        need(ix[k] >= 0 && ix[k] < Cn, "indices must lie in [0, V.shape[0])");
    D out = new_array<double>({R, K});
    double* o = out.mutable_data();
    {
        py::gil_scoped_release release;
        gp::pattern_sum(ip, R, ix, V.data, K, o, clamp_threads(n_threads));
    }
    return out;
}

}  // namespace

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

}  // namespace bindings
}  // namespace mvlearn_ext
