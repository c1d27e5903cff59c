// Function multi-versioning for the hot loops of the compiled core.
#pragma once

// A function marked MVLEARN_EXT_CLONES is compiled for several instruction
// sets and chosen at load time (GCC/Clang function multi-versioning), so a
// portable build still uses AVX2/AVX-512. The build disables FMA contraction
// (setup.py), so every clone gives the same bits.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(MVLEARN_EXT_NO_CLONES)
#define MVLEARN_EXT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MVLEARN_EXT_CLONES
#endif
