/* SPDX-License-Identifier: MIT */
int cudaGetDeviceCount(int *n) { *n = 0; return 0; }
