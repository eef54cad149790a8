/* SPDX-License-Identifier: MIT */
/* custom op library linked against the CUDA runtime */
extern int cudaGetDeviceCount(int *);
int kernels_device_count(void) { int n = 0; cudaGetDeviceCount(&n); return n; }
