/* SPDX-License-Identifier: MIT */
#include "util.h"

size_t ga_safe_copy(char *out, size_t size, const char *s, const char *extra,
                    char repl)
{
	size_t k = 0;

	if (!size)
		return 0;
	for (; s && *s && k < size - 1; s++) {
		if (ga_char_safe(*s, extra))
			out[k++] = *s;
		else if (repl)
			out[k++] = repl;
	}
	out[k] = '\0';
	return k;
}
