int vcore_version(void) { return VCORE_V; }
