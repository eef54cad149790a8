/* SPDX-License-Identifier: MIT */
int vcore_version(void) { return VCORE_V; }
