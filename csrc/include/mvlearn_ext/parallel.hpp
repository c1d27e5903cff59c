// Minimal fork-join helper over std::thread. Pure C++17, no Python.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace mvlearn_ext {

// Number of hardware threads, at least 1.
inline int hardware_threads() {
    unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(n);
}

// Split [0, n_items) into at most `n_threads` contiguous chunks of at least
// `min_chunk` items and run fn(begin, end) on each, the first chunk on the
// calling thread. Exceptions thrown by a worker are re-thrown here.
template <class Fn>
void parallel_for(std::ptrdiff_t n_items, int n_threads, std::ptrdiff_t min_chunk, Fn&& fn) {
    if (n_items <= 0) return;
    min_chunk = std::max<std::ptrdiff_t>(min_chunk, 1);
    std::ptrdiff_t max_useful = (n_items + min_chunk - 1) / min_chunk;
    std::ptrdiff_t t = std::max<std::ptrdiff_t>(1, std::min<std::ptrdiff_t>(n_threads, max_useful));
    if (t == 1) {
        fn(std::ptrdiff_t(0), n_items);
        return;
    }
    std::vector<std::thread> workers;
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(t));
    workers.reserve(static_cast<std::size_t>(t - 1));
    const std::ptrdiff_t base = n_items / t, extra = n_items % t;
    auto bounds = [&](std::ptrdiff_t i) {
        std::ptrdiff_t b = i * base + std::min(i, extra);
        return std::make_pair(b, b + base + (i < extra ? 1 : 0));
    };
    for (std::ptrdiff_t i = 1; i < t; ++i) {
        workers.emplace_back([&, i] {
            try {
                auto [b, e] = bounds(i);
                fn(b, e);
            } catch (...) {
                errors[static_cast<std::size_t>(i)] = std::current_exception();
            }
        });
    }
    try {
        auto [b, e] = bounds(0);
        fn(b, e);
    } catch (...) {
        errors[0] = std::current_exception();
    }
    for (auto& w : workers) w.join();
    for (auto& err : errors)
        if (err) std::rethrow_exception(err);
}

}  // namespace mvlearn_ext
