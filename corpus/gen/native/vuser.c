/* SPDX-License-Identifier: MIT */
extern int vcore_version(void);
int plugin_init(void) { return vcore_version(); }
