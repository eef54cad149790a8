/* SPDX-License-Identifier: MIT */
/* plugin/pcre2-lazy.c: the plugin's rules go through the stand-ins, which
 * load libpcre2-8 on first use.  Built twice: with the real soname (rules
 * compile and match as in the commands), and with one that does not exist
 * (every rule fails, saying which library could not be loaded).  Linking
 * the library as well does not hide the stand-ins: the program's own
 * definitions come first, so only they can make the second build fail. */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <pcre2.h>
#include <stdbool.h>
#include <string.h>

#include "diag.h"
#include "rules.h"
#include "tap.h"

static const struct ga_rules_source rule = {
        "t.rules", "[rule t.disk]\nclass = disk_full\nmatch = disk is full\n"};

int main(void)
{
	struct ga_diag d;
	struct ga_ruleset *rs;

	ga_diag_init(&d, "rules");
	rs = ga_rules_load_sources(&rule, 1, false, &d);
#ifdef EXPECT_MISSING
	ok(rs == NULL, "no library: the rule does not compile");
	ok(d.n == 1 && strstr(d.msgs[0], "cannot load libgpualert-absent.so.0"),
	   "the error names the library that could not be loaded: %s",
	   d.n ? d.msgs[0] : "(none)");
	{
		int err = 0;
		PCRE2_SIZE off = 1;
		pcre2_match_data *md = pcre2_match_data_create(1, NULL);

		ok(pcre2_compile((PCRE2_SPTR) "x", PCRE2_ZERO_TERMINATED, 0,
		                 &err, &off, NULL) == NULL &&
		           err != 0 && off == 0,
		   "pcre2_compile fails with an error code and offset 0");
		ok(md == NULL, "pcre2_match_data_create gives NULL");
		pcre2_match_data_free(md);
		pcre2_code_free(NULL);
		ok(true, "the free functions accept NULL");
	}
#else
	ok(rs != NULL && d.errors == 0, "the rule compiles through the "
	                                "stand-ins");
	{
		struct ga_ruleset *all = ga_rules_load(NULL, NULL, NULL);

		ok(all != NULL && ga_ruleset_size(all) > 0,
		   "the built-in rules compile (%zu)",
		   all ? ga_ruleset_size(all) : 0);
		ga_ruleset_destroy(all);
	}
	{
		int err = 0;
		PCRE2_SIZE off = 0;
		pcre2_code *re = pcre2_compile((PCRE2_SPTR) "disk (is) full",
		                               PCRE2_ZERO_TERMINATED, 0, &err,
		                               &off, NULL);
		pcre2_match_data *md = pcre2_match_data_create(2, NULL);
		pcre2_match_context *mc = pcre2_match_context_create(NULL);
		const char *s = "the disk is full";

		ok(re && md && mc && pcre2_set_match_limit(mc, 1000) == 0 &&
		           pcre2_set_depth_limit(mc, 100) == 0,
		   "compile, match data and context");
		(void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
		is_int(pcre2_match(re, (PCRE2_SPTR)s, strlen(s), 0, 0, md, mc),
		       2, "a match with its group");
		pcre2_match_context_free(mc);
		pcre2_match_data_free(md);
		pcre2_code_free(re);
	}
	{
		PCRE2_UCHAR msg[128];

		ok(pcre2_get_error_message(PCRE2_ERROR_NOMATCH, msg,
		                           sizeof(msg)) > 0 &&
		           strstr((char *)msg, "no match"),
		   "the library's own error messages: %s", (char *)msg);
	}
	{
		PCRE2_UCHAR msg[128];
		int err = 0;
		PCRE2_SIZE off = 0;

		ok(pcre2_compile((PCRE2_SPTR) "(x", PCRE2_ZERO_TERMINATED, 0,
		                 &err, &off, NULL) == NULL &&
		           pcre2_get_error_message(err, msg, sizeof(msg)) > 0 &&
		           strstr((char *)msg, "parenthesis"),
		   "a bad pattern is described by the library: %s",
		   (char *)msg);
	}
#endif
	ga_ruleset_destroy(rs);
	ga_diag_finish(&d);
	return tap_done();
}
