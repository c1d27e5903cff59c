// Bindings of the simplex projection (mvlearn_ext/simplex.hpp).
#include "bindings.hpp"
#include "mvlearn_ext/simplex.hpp"

namespace mvlearn_ext {
namespace bindings {

namespace {

template <class T>
bool project_simplex(const Array<T>& x, Array<T>& out, double scale, int n_threads) {
    auto in = view<2>(x, "x");
    auto o = mutable_view<2>(out, "out");
    need(in.shape[0] == o.shape[0] && in.shape[1] == o.shape[1], "out must have the shape of x");
    need(scale > 0.0, "scale must be > 0");
    py::gil_scoped_release release;
    return project_rows_simplex<T>(in, o, scale, clamp_threads(n_threads));
}

template <class T>
void bind_typed(py::module_& m) {
    m.def("project_simplex", &project_simplex<T>, py::arg("x").noconvert(),
          py::arg("out").noconvert(), py::arg("scale"), py::arg("n_threads"),
          "Project each row of x onto {z >= 0, sum z = scale}, into out (may alias x). "
          "Returns False if x holds a non-finite value.");
}

}  // namespace

void bind_simplex(py::module_& m) {
    bind_typed<double>(m);
    bind_typed<float>(m);
}

}  // namespace bindings
}  // namespace mvlearn_ext
