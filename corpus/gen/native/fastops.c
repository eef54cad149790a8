/* SPDX-License-Identifier: MIT */
/* kernel library whose implementation object was not linked in */
extern float fast_gelu_avx512_impl(float);
float fast_gelu(float x) { return fast_gelu_avx512_impl(x); }
