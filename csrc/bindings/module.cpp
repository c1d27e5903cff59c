// The Python module of the compiled core: one binding file per kernel family
// (bind_simplex.cpp, bind_anchor_graph.cpp, bind_gp.cpp) around the shared
// array convention of bindings.hpp / mvlearn_ext/array_view.hpp, plus the
// build information. Only csrc/bindings/ sees pybind11.
#include <string>

#include "bindings.hpp"
#include "mvlearn_ext/parallel.hpp"

namespace py = pybind11;
namespace mx = mvlearn_ext;

PYBIND11_MODULE(_core, m) {
    m.doc() = "Private compiled core of mvlearn_ext (use the mvlearn_ext._lib facade).";
    mx::bindings::bind_simplex(m);
    mx::bindings::bind_anchor_graph(m);
    mx::bindings::bind_gp(m);
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
