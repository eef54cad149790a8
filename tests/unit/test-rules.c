/* SPDX-License-Identifier: MIT */
/* The rules file parser, layering, fallback and literal extraction. */
#include "rules.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "literals.h"
#include "log.h"
#include "prefilter.h"
#include "rulefile.h"
#include "tap.h"

static void quiet(enum ga_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

struct loaded {
	struct ga_ruleset *rs;
	struct ga_diag diag;
	char all[8192]; /* every message, '\n'-separated */
};

static void load_text(struct loaded *l, const char *text, bool builtin)
{
	struct ga_rules_source src = {"t.rules", text};

	ga_diag_init(&l->diag, "rules");
	l->rs = ga_rules_load_sources(&src, 1, builtin, &l->diag);
	l->all[0] = '\0';
	for (size_t i = 0; i < l->diag.n; i++) {
		strncat(l->all, l->diag.msgs[i],
		        sizeof(l->all) - strlen(l->all) - 2);
		strcat(l->all, "\n");
	}
}

static void unload(struct loaded *l)
{
	ga_ruleset_destroy(l->rs);
	ga_diag_finish(&l->diag);
}

static void print_msgs(const struct loaded *l)
{
	for (size_t i = 0; i < l->diag.n; i++)
		diag("  %s", l->diag.msgs[i]);
}

/* TEXT must fail to load with exactly ERRORS errors, one of which is
 * WANT (a prefix of the message, location included). */
static void expect_error(const char *name, const char *text, size_t errors,
                         const char *want)
{
	struct loaded l;

	load_text(&l, text, false);
	ok(l.rs == NULL, "%s: rejected", name);
	if (!is_int(l.diag.errors, errors, "%s: %zu error(s)", name, errors))
		print_msgs(&l);
	if (!ok(has_str(l.all, want), "%s: message '%s'", name, want))
		print_msgs(&l);
	unload(&l);
}

/* TEXT must load into L with exactly one warning, WANT (a prefix of the
 * message, location included).  The caller unloads L. */
static void expect_warning(struct loaded *l, const char *name, const char *text,
                           const char *want)
{
	load_text(l, text, false);
	ok(l->rs != NULL, "%s: loads", name);
	if (!is_int(l->diag.warnings, 1, "%s: one warning", name))
		print_msgs(l);
	if (!ok(has_str(l->all, want), "%s: message '%s'", name, want))
		print_msgs(l);
}

static const struct ga_rule *find_rule(const struct ga_ruleset *rs,
                                       const char *id, size_t *at)
{
	for (size_t i = 0; i < ga_ruleset_size(rs); i++) {
		if (!strcmp(ga_rule_id(ga_ruleset_rule(rs, i)), id)) {
			if (at)
				*at = i;
			return ga_ruleset_rule(rs, i);
		}
	}
	return NULL;
}

static void test_errors(void)
{
	char *big;
	struct ga_buf b;

	expect_error("unknown key",
	             "[rule x]\nclass = nan\nmatch = abcd\nfoo = 1\n", 1,
	             "t.rules:4: error: rule 'x': unknown key 'foo'");
	expect_error("key outside a section", "# c\nclass = nan\n", 1,
	             "t.rules:2: error: 'class' outside a [rule ID] section");
	expect_error("no '=' in a key line",
	             "[rule x]\nclass = nan\nmatch abcd\n", 1,
	             "t.rules:3: error: expected 'key = value'");
	/* Keys of a rejected section are not reported again. */
	expect_error("bad section header",
	             "[rule x\nclass = nan\nmatch = abcd\n", 1,
	             "t.rules:1: error: malformed section header");
	expect_error("junk after section header", "[rule x] y\nclass = nan\n",
	             1, "t.rules:1: error: malformed section header");
	expect_error("unknown section kind", "\n[rules x]\nclass = nan\n", 1,
	             "t.rules:2: error: unknown section '[rules]'");
	expect_error("bad id", "[rule a/b]\nclass = nan\n", 1,
	             "t.rules:1: error: invalid rule id 'a/b'");
	expect_error("empty id", "[rule]\n", 1,
	             "t.rules:1: error: invalid rule id ''");
	expect_error(
	        "id too long",
	        "[rule aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\n",
	        1, "invalid rule id 'aaaa");
	expect_error(
	        "duplicate id in one file",
	        "[rule x]\nclass = nan\nmatch = abcd\n\n[rule x]\n"
	        "class = nan\nmatch = efgh\n",
	        1, "t.rules:5: error: rule 'x' is defined twice in this file");
	expect_error("missing class", "[rule x]\nmatch = abcd\n", 1,
	             "t.rules:1: error: rule 'x': missing 'class ='");
	expect_error("unknown class", "[rule x]\nclass = oom\nmatch = abcd\n",
	             1, "t.rules:2: error: rule 'x': unknown class 'oom'");
	expect_error("priority word",
	             "[rule x]\nclass = nan\npriority = high\nmatch = abcd\n",
	             1,
	             "t.rules:3: error: rule 'x': priority must be an integer "
	             "0-1000, not 'high'");
	expect_error("priority too big",
	             "[rule x]\nclass = nan\npriority = 1001\nmatch = abcd\n",
	             1, "not '1001'");
	expect_error("priority negative",
	             "[rule x]\nclass = nan\npriority = -1\nmatch = abcd\n", 1,
	             "not '-1'");
	expect_error("priority trailing junk",
	             "[rule x]\nclass = nan\npriority = 5x\nmatch = abcd\n", 1,
	             "not '5x'");
	expect_error("empty pattern", "[rule x]\nclass = nan\nmatch =\n", 1,
	             "t.rules:3: error: rule 'x': empty match pattern");
	expect_error("empty exclude",
	             "[rule x]\nclass = nan\nmatch = abcd\nexclude =  \n", 1,
	             "t.rules:4: error: rule 'x': empty exclude pattern");
	expect_error("bad regex", "[rule x]\nclass = nan\n\nmatch = abcd(ef\n",
	             1,
	             "t.rules:4: error: rule 'x': missing closing parenthesis "
	             "at offset 7");
	expect_error("bad exclude regex",
	             "[rule x]\nclass = nan\nmatch = abcd\nexclude = a[b\n", 1,
	             "t.rules:4: error: rule 'x': missing terminating ] for "
	             "character class at offset 3");
	expect_error(
	        "exit code too big", "[rule x]\nclass = nan\nexit = 1, 256\n",
	        1,
	        "t.rules:3: error: rule 'x': exit: '256' is not 'failure', "
	        "'success', 'any' or an exit code 0-255");
	expect_error("exit word", "[rule x]\nclass = nan\nexit = fail\n", 1,
	             "exit: 'fail' is not");
	expect_error("exit empty list", "[rule x]\nclass = nan\nexit = ,\n", 1,
	             "t.rules:3: error: rule 'x': empty list");
	expect_error(
	        "bad signal", "[rule x]\nclass = nan\nsignal = SEGV FOO\n", 1,
	        "t.rules:3: error: rule 'x': signal: unknown signal 'FOO'");
	expect_error("signal 0", "[rule x]\nclass = nan\nsignal = 0\n", 1,
	             "signal: unknown signal '0'");
	expect_error("bad state", "[rule x]\nclass = nan\nstate = RUNNING\n", 1,
	             "t.rules:3: error: rule 'x': state: unknown scheduler "
	             "state 'RUNNING'");
	expect_error("state NONE", "[rule x]\nclass = nan\nstate = NONE\n", 1,
	             "state 'NONE'");
	expect_error("bad oom_kill",
	             "[rule x]\nclass = nan\noom_kill = maybe\n", 1,
	             "t.rules:3: error: rule 'x': oom_kill must be yes or no");
	expect_error("bad caseless",
	             "[rule x]\nclass = nan\nmatch = abcd\ncaseless = sure\n",
	             1,
	             "t.rules:4: error: rule 'x': caseless must be yes or no");
	expect_error(
	        "short literal",
	        "[rule x]\nclass = nan\nmatch = abcd\nliteral = abc\n", 1,
	        "t.rules:4: error: rule 'x': literal 'abc' is shorter than "
	        "4 bytes");
	expect_error("short quoted literal",
	             "[rule x]\nclass = nan\nmatch = abcd\nliteral = \" na\"\n",
	             1, "literal ' na' is shorter than 4 bytes");
	expect_error(
	        "short literal between word boundaries",
	        "[rule x]\nclass = nan\nmatch = abcd\nliteral = \\binf\\b\n", 1,
	        "literal '\\binf\\b' is shorter than 4 bytes");
	expect_error(
	        "word boundary next to a blank",
	        "[rule x]\nclass = nan\nmatch = abcd\nliteral = \"nan \\b\"\n",
	        1,
	        "t.rules:4: error: rule 'x': literal 'nan \\b': \\b must "
	        "be next to a letter, digit or '_'");
	expect_error(
	        "neither match nor condition",
	        "[rule x]\nclass = nan\nexit = failure\nhint = h\n", 1,
	        "t.rules:1: error: rule 'x': needs at least one 'match ='");
	expect_error("exclude without match",
	             "[rule x]\nclass = nan\nsignal = SEGV\nexclude = abcd\n",
	             1,
	             "t.rules:1: error: rule 'x': 'exclude', 'exclusion', "
	             "'literal', 'fallback', 'fatal', 'echo_of', "
	             "'ignored_after' and 'yields_to' need a 'match ='");
	expect_error("literal without match",
	             "[rule x]\nclass = nan\nsignal = SEGV\nliteral = abcd\n",
	             1,
	             "'literal', 'fallback', 'fatal', 'echo_of', "
	             "'ignored_after' and 'yields_to' need a 'match ='");
	expect_error("fatal without match",
	             "[rule x]\nclass = nan\nsignal = SEGV\nfatal = yes\n", 1,
	             "'ignored_after' and 'yields_to' need a 'match ='");
	expect_error("echo_of without match",
	             "[rule x]\nclass = nan\nsignal = SEGV\necho_of = y\n", 1,
	             "'ignored_after' and 'yields_to' need a 'match ='");
	expect_error("ignored_after without match",
	             "[rule x]\nclass = nan\nsignal = SEGV\n"
	             "ignored_after = y\n",
	             1, "'ignored_after' and 'yields_to' need a 'match ='");
	expect_error("yields_to without match",
	             "[rule x]\nclass = nan\nsignal = SEGV\nyields_to = y\n", 1,
	             "'ignored_after' and 'yields_to' need a 'match ='");
	expect_error("ignored_after: not an id",
	             "[rule x]\nclass = nan\nmatch = abcd\n"
	             "ignored_after = a/b\n",
	             1,
	             "t.rules:4: error: rule 'x': ignored_after: 'a/b' is not "
	             "a rule id");
	expect_error("echo_of: not an id",
	             "[rule x]\nclass = nan\nmatch = abcd\necho_of = a, b/c\n",
	             1,
	             "t.rules:4: error: rule 'x': echo_of: 'b/c' is not a "
	             "rule id");
	expect_error("echo_of: empty list",
	             "[rule x]\nclass = nan\nmatch = abcd\necho_of = ,\n", 1,
	             "t.rules:4: error: rule 'x': empty list");
	expect_error("bad fallback",
	             "[rule x]\nclass = nan\nmatch = abcd\nfallback = often\n",
	             1,
	             "t.rules:4: error: rule 'x': fallback must be yes or no");
	expect_error(
	        "disable unknown id", "[disable nope]\n", 1,
	        "t.rules:1: error: disable: no rule 'nope' in the built-in "
	        "rules or earlier files");
	expect_error("key after disable",
	             "[rule x]\nclass = nan\nmatch = abcd\n"
	             "[disable x]\nclass = nan\n",
	             1,
	             "t.rules:5: error: 'class' outside a [rule ID] section");

	/* A line longer than 65536 bytes (the INI reader's limit). */
	ga_buf_init(&b);
	ga_buf_puts(&b, "[rule x]\nclass = nan\nmatch = ");
	for (int i = 0; i < 65540; i++)
		ga_buf_putc(&b, 'a');
	ga_buf_puts(&b, "\nmatch = abcd\n");
	big = ga_buf_steal(&b);
	expect_error("overlong line", big, 1,
	             "t.rules:3: error: line longer than 65536 bytes");
	free(big);

	/* The INI dialect shared with gpualert.conf: no continuation lines,
	 * and a ';' after a value is part of it, not a comment. */
	expect_error("continuation line",
	             "[rule x]\nclass = nan\nmatch = abcd\n   |efgh\n", 1,
	             "t.rules:4: error: continuation lines are not supported");
	expect_error("inline comment",
	             "[rule x]\nclass = nan ; the class\n"
	             "match = abcd\n",
	             1,
	             "t.rules:2: error: rule 'x': unknown class 'nan ; the "
	             "class'");
	{
		struct loaded l;

		/* A 5000-byte pattern (lines of any practical length). */
		ga_buf_init(&b);
		ga_buf_puts(&b, "; comment\n  # indented comment\n[rule x]\n"
		                "class = nan\nmatch = abcd;efgh#");
		for (int i = 0; i < 5000; i++)
			ga_buf_putc(&b, 'a' + i % 26);
		ga_buf_puts(&b, "\r\n");
		big = ga_buf_steal(&b);
		load_text(&l, big, false);
		ok(l.rs && l.diag.n == 0,
		   "a 5 KB pattern line, CRLF, full-line comments: loaded");
		if (!l.rs || l.diag.n)
			print_msgs(&l);
		unload(&l);
		free(big);
	}

	/* 65 match lines: the 65th is refused. */
	ga_buf_init(&b);
	ga_buf_puts(&b, "[rule x]\nclass = nan\n");
	for (int i = 0; i < 65; i++)
		ga_buf_printf(&b, "match = pattern%d\n", i);
	big = ga_buf_steal(&b);
	expect_error(
	        "too many patterns", big, 1,
	        "t.rules:67: error: rule 'x': too many patterns (at most 64)");
	free(big);

	/* Several errors in one file are all reported, each once. */
	expect_error("several errors",
	             "[rule a]\nclass = nan\npriority = x\nmatch = abcd\n"
	             "[rule b]\nclass = x\nmatch = abcd\n",
	             2, "t.rules:6: error: rule 'b': unknown class 'x'");
	expect_error("several regex errors",
	             "[rule a]\nclass = nan\nmatch = (\n[rule b]\nclass = nan\n"
	             "match = abcd\nexclude = x{2,1}\n",
	             2,
	             "t.rules:3: error: rule 'a': missing closing parenthesis "
	             "at offset 1");
}

/* KEY (read back by REFS) names one rule that exists and one that does
 * not: a warning, the one found resolved, both listed as written. */
static void expect_refs(struct loaded *l, const char *key,
                        size_t (*refs)(const struct ga_rule *,
                                       const uint32_t **))
{
	char text[256], warning[128], name[64], written[64];
	size_t at_rule = 0, at_target = 9;
	const struct ga_rule *r;
	const uint32_t *found = NULL;
	struct ga_buf listed;

	snprintf(text, sizeof(text),
	         "[rule r]\nclass = cancelled\nmatch = step cancelled\n"
	         "%s = context.target, gone\n"
	         "[rule context.target]\nclass = nan\npriority = 0\n"
	         "match = loss is nan\n",
	         key);
	snprintf(warning, sizeof(warning),
	         "t.rules:1: warning: rule 'r': %s: there is no rule 'gone'; "
	         "ignored",
	         key);
	snprintf(name, sizeof(name), "%s naming a missing rule", key);
	snprintf(written, sizeof(written), "%s = context.target, gone\n", key);
	expect_warning(l, name, text, warning);
	r = l->rs ? find_rule(l->rs, "r", &at_rule) : NULL;
	if (l->rs)
		find_rule(l->rs, "context.target", &at_target);
	ok(r && refs(r, &found) == 1 && found[0] == at_target,
	   "%s: the one it found is resolved", key);
	ga_buf_init(&listed);
	if (r)
		ga_rule_format(r, &listed);
	ok(listed.data && has_str(listed.data, written),
	   "rules list shows %s as written", key);
	ga_buf_finish(&listed);
	unload(l);
}

static void test_accepts(void)
{
	struct loaded l;
	const struct ga_rule *r;
	struct ga_buf b;

	load_text(&l,
	          "# comment\n; also a comment\n\n"
	          "  [rule ok.rule-1:x]  \r\n"
	          "class = cuda_oom\r\n"
	          "priority = 77\n"
	          "match = out of memory\n"
	          "exclude = retry\n"
	          "literal = \" nan \"\n"
	          "literal = \" inf\\b\"\n"
	          "literal = of memory\n"
	          "literal = \"\\tnan\\b\"\n"
	          "exit = 1, 2 3\n"
	          "caseless = yes\n"
	          "hint = do this\n"
	          "[rule status]\nclass = segfault\nsignal = SEGV, 7, sigbus\n"
	          "state = timeout\noom_kill = no\n",
	          false);
	ok(l.rs != NULL, "a valid file loads");
	is_int(l.diag.errors, 0, "no errors");
	is_int(l.diag.warnings, 0, "no warnings");
	if (!l.rs) {
		print_msgs(&l);
		unload(&l);
		return;
	}
	is_int(ga_ruleset_size(l.rs), 2, "two rules");
	r = find_rule(l.rs, "ok.rule-1:x", NULL);
	ok(r != NULL, "id with . : - _ and digits, CRLF and blanks trimmed");
	if (r) {
		is_int(ga_rule_class(r), GA_CLASS_CUDA_OOM, "class");
		is_int(ga_rule_priority(r), 77, "priority");
		is_str(ga_rule_hint(r), "do this", "hint");
		is_int(ga_rule_line(r), 4, "defined at line 4");
		is_str(ga_rule_file(r), "t.rules", "file name");
		ga_buf_init(&b);
		ga_rule_format(r, &b);
		ok(has_str(b.data, "exit = 1, 2, 3\n"), "format: exit codes");
		ok(has_str(b.data, "caseless = yes\n"), "format: caseless");
		/* The blanks of a quoted literal survive a round trip through
		 * `gpualert rules list`. */
		ok(has_str(b.data, "literal = \" nan \"\n"),
		   "format: quoted literal keeps its blanks");
		ok(has_str(b.data, "literal = \" inf\\b\"\n"),
		   "format: a word boundary as written");
		ok(has_str(b.data, "literal = \\tnan\\b\n"),
		   "format: a tab as written");
		ga_buf_finish(&b);
	}
	r = find_rule(l.rs, "status", NULL);
	ok(r && !ga_rule_has_patterns(r), "status rule has no patterns");
	if (r) {
		ga_buf_init(&b);
		ga_rule_format(r, &b);
		ok(has_str(b.data, "signal = SIGBUS, SIGSEGV\n") ||
		           has_str(b.data, "signal = BUS, SEGV\n"),
		   "format: signals in number order");
		ok(has_str(b.data, "state = TIMEOUT\n"), "format: state");
		ok(has_str(b.data, "oom_kill = no\n"), "format: oom_kill");
		ga_buf_finish(&b);
	}
	is_int(ga_ruleset_unfiltered(l.rs, &(const uint32_t *){NULL}), 0,
	       "the pattern rule has its literal");
	unload(&l);

	/* Priority default: the class's. */
	load_text(&l, "[rule x]\nclass = nccl\nmatch = abcd\n", false);
	ok(l.rs && ga_rule_priority(ga_ruleset_rule(l.rs, 0)) ==
	                   ga_class_default_priority(GA_CLASS_NCCL),
	   "priority defaults to the class's");
	ok(l.rs && !strcmp(ga_rule_hint(ga_ruleset_rule(l.rs, 0)),
	                   ga_class_default_hint(GA_CLASS_NCCL)),
	   "hint defaults to the class's");
	unload(&l);

	/* A pattern that the rule's own literals do not cover is never tried
	 * on the lines it alone would match: warned, with such a line. */
	expect_warning(&l, "literals miss a pattern",
	               "[rule x]\nclass = nan\nmatch = loss is nan\n"
	               "match = (pre-?empted|evicted)\nliteral = loss is\n"
	               "literal = preempted\n",
	               "t.rules:4: warning: rule 'x': this pattern can match a "
	               "line that holds none of the rule's literals "
	               "(\"pre-empted\"");
	unload(&l);
	/* ... nor does a literal found in its case only (its pattern is
	 * case-sensitive and holds it as written) cover a pattern that holds
	 * its text in another case; with (?i) the literal is caseless. */
	expect_warning(&l, "a literal in another case misses a pattern",
	               "[rule x]\nclass = host_oom\n"
	               "match = Cannot allocate memory\n"
	               "match = cannot allocate memory for thread-local data\n"
	               "literal = Cannot allocate memory\n",
	               "t.rules:4: warning: rule 'x': this pattern can match a "
	               "line that holds none of the rule's literals "
	               "(\"cannot allocate memory for thread-local data\"");
	unload(&l);
	load_text(&l,
	          "[rule x]\nclass = host_oom\nmatch = Cannot allocate memory\n"
	          "match = (?i)cannot allocate memory for thread-local data\n"
	          "literal = Cannot allocate memory\n",
	          false);
	if (!ok(l.rs && l.diag.n == 0, "... and none with (?i)"))
		print_msgs(&l);
	unload(&l);
	/* ... also where the other case is only one choice of a class. */
	expect_warning(&l, "a literal in its case misses a class's choice",
	               "[rule x]\nclass = nan\nmatch = Engine stall\n"
	               "match = [Ee]ngine stalled twice\n"
	               "literal = Engine stall\n",
	               "t.rules:4: warning: rule 'x': this pattern can match a "
	               "line that holds none of the rule's literals "
	               "(\"engine stalled twice\"");
	unload(&l);

	/* "echo_of", "ignored_after" and "yields_to" name rules of the whole
	 * set, wherever they are defined; one that is not there (an admin
	 * disabled it) only loses its effect. */
	expect_refs(&l, "echo_of", ga_rule_echo_of);
	expect_refs(&l, "ignored_after", ga_rule_ignored_after);
	expect_refs(&l, "yields_to", ga_rule_yields_to);

	/* A rule with a pattern that has no literal: warned, unfiltered. */
	expect_warning(&l, "literal-less rule",
	               "[rule x]\nclass = nan\nmatch = a.b.c\n",
	               "t.rules:1: warning: rule 'x': no literal of 4+ bytes "
	               "found");
	{
		const uint32_t *u;

		is_int(l.rs ? ga_ruleset_unfiltered(l.rs, &u) : 9, 1,
		       "... and it is unfiltered");
	}
	unload(&l);
}

static void test_order(void)
{
	struct loaded l;

	load_text(&l,
	          "[rule low]\nclass = code_error\nmatch = abcd\n"
	          "[rule high]\nclass = nan\npriority = 90\nmatch = abcd\n"
	          "[rule tie1]\nclass = io_error\npriority = 50\nmatch = abcd\n"
	          "[rule tie2]\nclass = nan\npriority = 50\nmatch = abcd\n",
	          false);
	ok(l.rs != NULL, "order: loads");
	if (l.rs) {
		is_str(ga_rule_id(ga_ruleset_rule(l.rs, 0)), "high", "order 0");
		is_str(ga_rule_id(ga_ruleset_rule(l.rs, 1)), "tie1", "order 1");
		is_str(ga_rule_id(ga_ruleset_rule(l.rs, 2)), "tie2", "order 2");
		is_str(ga_rule_id(ga_ruleset_rule(l.rs, 3)), "low", "order 3");
		ok(ga_ruleset_rule(l.rs, 4) == NULL, "out of range: NULL");
	}
	unload(&l);
}

static void test_layering(void)
{
	struct ga_ruleset *base = ga_rules_load(NULL, NULL, NULL);
	struct ga_rules_source src[2] = {
	        {"50-site.rules",
	         "[rule cuda.oom.torch]\nclass = nan\npriority = 80\n"
	         "match = zzzz\n"
	         "[disable gpu.ecc]\n"
	         "[rule site.new]\nclass = io_error\nmatch = lustre is sad\n"},
	        {"60-site.rules",
	         "[rule site.new]\nclass = disk_full\nmatch = lustre is full\n"},
	};
	struct ga_diag d;
	struct ga_ruleset *rs;
	const struct ga_rule *r;
	size_t n_base, at = 0, at_next = 0;

	ok(base != NULL, "built-in rules load");
	if (!base)
		return;
	n_base = ga_ruleset_size(base);
	ga_diag_init(&d, "rules");
	rs = ga_rules_load_sources(src, 2, true, &d);
	ok(rs != NULL, "layered rules load");
	is_int(d.errors, 0, "no errors");
	if (rs) {
		is_int(ga_ruleset_size(rs), n_base, "one disabled, one added");
		r = find_rule(rs, "cuda.oom.torch", &at);
		find_rule(rs, "cuda.oom.runtime", &at_next);
		ok(r && ga_rule_class(r) == GA_CLASS_NAN,
		   "replaced by id: the new class");
		ok(r && !strcmp(ga_rule_file(r), "50-site.rules"),
		   "replaced by id: the new file");
		/* Same priority: still before the rule after it in load
		 * order. */
		is_int(at + 1, at_next, "a replaced rule keeps its load order");
		ok(find_rule(rs, "gpu.ecc", NULL) == NULL, "disabled");
		r = find_rule(rs, "site.new", NULL);
		ok(r && ga_rule_class(r) == GA_CLASS_DISK_FULL,
		   "a later file replaces a rule of an earlier one");
	}
	ga_ruleset_destroy(rs);
	ga_diag_finish(&d);

	/* The same id twice in different files is fine; twice in one file
	 * is not (tested above).  A rule may be disabled and then defined
	 * again. */
	{
		struct ga_rules_source s2 = {
		        "x.rules",
		        "[disable gpu.ecc]\n[rule gpu.ecc]\nclass = gpu_hw\n"
		        "match = ecc is sad\n"};

		ga_diag_init(&d, "rules");
		rs = ga_rules_load_sources(&s2, 1, true, &d);
		ok(rs && ga_ruleset_size(rs) == n_base,
		   "disable then redefine");
		ga_ruleset_destroy(rs);
		ga_diag_finish(&d);
	}
	ga_ruleset_destroy(base);
}

/* Does rule ID of RS count LINE? */
static int counts(const struct ga_ruleset *rs, const char *id, const char *line)
{
	const struct ga_rule *r = find_rule(rs, id, NULL);
	struct ga_matcher *m = ga_matcher_create();
	int v = r && m ? ga_rule_match(r, m, line, strlen(line)) : -1;

	ga_matcher_destroy(m);
	return v;
}

/* [exclusion ID]: exclude patterns written once and named by rules; the
 * names are resolved once every file is read. */
static void test_exclusions(void)
{
	static const char two_rules[] =
	        "[exclusion optional-lib]\n"
	        "exclude = \\bNCCL INFO\\b\n"
	        "exclude = dlerror\n"
	        "[rule a]\nclass = import_error\nmatch = cannot open shared\n"
	        "exclusion = optional-lib\n"
	        "[rule b]\nclass = io_error\nmatch = No such file\n"
	        "exclude = retrying\nexclusion = optional-lib\n";
	struct loaded l;
	struct ga_buf out;

	ga_buf_init(&out);
	load_text(&l, two_rules, false);
	ok(l.rs != NULL, "two rules name one exclusion");
	if (l.rs) {
		is_int(counts(l.rs, "a",
		              "libfoo.so: cannot open shared object"),
		       1, "a counts its line");
		is_int(counts(l.rs, "a",
		              "NCCL INFO libnccl-net.so: cannot open shared"),
		       0, "the exclusion's first pattern holds for a");
		is_int(counts(l.rs, "b", "dlerror: No such file"), 0,
		       "the exclusion's second pattern holds for b");
		is_int(counts(l.rs, "b", "No such file, retrying"), 0,
		       "b's own exclude still holds");
		is_int(counts(l.rs, "b", "x.pt: No such file"), 1,
		       "b counts its line");
		ga_rule_format(find_rule(l.rs, "b", NULL), &out);
		ok(out.data && strstr(out.data, "exclude = retrying\n") &&
		           strstr(out.data, "exclusion = optional-lib\n") &&
		           strstr(out.data, "; exclude = dlerror\n"),
		   "rules list: the rule's own excludes, the exclusion's name and "
		   "its patterns as comments");
	}
	ga_buf_finish(&out);
	unload(&l);

	/* A later file's exclusion replaces the earlier one for every rule
	 * that names it, built-in rules included. */
	{
		struct ga_rules_source src[2] = {
		        {"10-a.rules",
		         "[exclusion e]\nexclude = old\n"
		         "[rule a]\nclass = nan\nmatch = loss is nan\n"
		         "exclusion = e\n"},
		        {"20-b.rules", "[exclusion e]\nexclude = new\n"},
		};
		struct ga_diag d;
		struct ga_ruleset *rs;

		ga_diag_init(&d, "rules");
		rs = ga_rules_load_sources(src, 2, false, &d);
		ok(rs != NULL, "an exclusion redefined in a later file");
		if (rs) {
			is_int(counts(rs, "a", "old: loss is nan"), 1,
			       "the earlier definition is gone");
			is_int(counts(rs, "a", "new: loss is nan"), 0,
			       "the later definition holds");
		}
		ga_ruleset_destroy(rs);
		ga_diag_finish(&d);
	}

	{
		struct loaded w;

		expect_warning(
		        &w, "an exclusion no rule names",
		        "[exclusion optional-libary]\nexclude = abcd\n",
		        "t.rules:1: warning: exclusion 'optional-libary': "
		        "no rule names it");
		unload(&w);
	}
	expect_error("an exclusion no file defines",
	             "[rule a]\nclass = nan\nmatch = loss is nan\n"
	             "exclusion = nowhere\n",
	             1,
	             "t.rules:1: error: rule 'a': exclusion: there is no "
	             "[exclusion nowhere]");
	expect_error("an exclusion without a pattern",
	             "[exclusion e]\n[rule a]\nclass = nan\nmatch = x nan\n", 1,
	             "t.rules:1: error: exclusion 'e': needs at least one "
	             "'exclude ='");
	expect_error("a key an exclusion does not take",
	             "[exclusion e]\nexclude = abcd\nmatch = abcd\n", 1,
	             "t.rules:3: error: exclusion 'e': unknown key 'match' "
	             "(exclude)");
	expect_error("an exclusion twice in one file",
	             "[exclusion e]\nexclude = abcd\n"
	             "[exclusion e]\nexclude = efgh\n",
	             1,
	             "t.rules:3: error: exclusion 'e' is defined twice in this "
	             "file");
	expect_error("a bad pattern, reported where the exclusion has it",
	             "[exclusion e]\nexclude = (abcd\n"
	             "[rule a]\nclass = nan\nmatch = loss is nan\n"
	             "exclusion = e\n",
	             1,
	             "t.rules:2: error: exclusion 'e': missing closing "
	             "parenthesis");
	expect_error("exclusion needs a match",
	             "[exclusion e]\nexclude = abcd\n"
	             "[rule a]\nclass = nan\nsignal = SEGV\nexclusion = e\n",
	             1, "'exclude', 'exclusion', 'literal'");
	expect_error("exclusion: not an id",
	             "[rule a]\nclass = nan\nmatch = abcd\nexclusion = a/b\n",
	             1,
	             "t.rules:4: error: rule 'a': exclusion: 'a/b' is not an "
	             "exclusion id");
	expect_error("an exclusion's id", "[exclusion a/b]\nexclude = abcd\n",
	             1, "t.rules:1: error: invalid exclusion id 'a/b'");
}

static int write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, data, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

static void test_dir(void)
{
	char dir[] = "/tmp/gpualert-test-XXXXXX";
	char path[256];
	struct ga_diag d;
	struct ga_ruleset *rs, *base;
	bool fell_back = true;
	size_t n_base;
	static const char nul_file[] =
	        "[rule n]\nclass = nan\0\nmatch = abcd\n";

	base = ga_rules_load(NULL, NULL, NULL);
	if (!base || !mkdtemp(dir)) {
		ok(false, "set up a rules directory");
		ga_ruleset_destroy(base);
		return;
	}
	n_base = ga_ruleset_size(base);

	/* Missing directory: built-ins, no fallback. */
	snprintf(path, sizeof(path), "%s/missing", dir);
	ga_diag_init(&d, "rules");
	rs = ga_rules_load(path, &d, &fell_back);
	ok(rs && ga_ruleset_size(rs) == n_base && !fell_back && d.errors == 0,
	   "missing directory: built-in rules, no error");
	ga_ruleset_destroy(rs);
	ga_diag_finish(&d);

	/* A good file (and files that are not *.rules, ignored). */
	snprintf(path, sizeof(path), "%s/10-good.rules", dir);
	write_file(path, "[rule site.good]\nclass = nan\nmatch = abcd\n", 42);
	snprintf(path, sizeof(path), "%s/README", dir);
	write_file(path, "not rules\n", 10);
	snprintf(path, sizeof(path), "%s/.hidden.rules", dir);
	write_file(path, "garbage\n", 8);
	ga_diag_init(&d, "rules");
	rs = ga_rules_load(dir, &d, &fell_back);
	ok(rs && ga_ruleset_size(rs) == n_base + 1 && !fell_back,
	   "good directory: its rule is added");
	ok(rs && find_rule(rs, "site.good", NULL), "... site.good is there");
	ga_ruleset_destroy(rs);
	ga_diag_finish(&d);

	/* A broken file: the whole directory is ignored. */
	snprintf(path, sizeof(path), "%s/20-bad.rules", dir);
	write_file(path, "[rule site.bad]\nclass = nope\nmatch = abcd\n", 42);
	ga_diag_init(&d, "rules");
	rs = ga_rules_load(dir, &d, &fell_back);
	ok(rs != NULL, "broken directory: still a ruleset");
	ok(fell_back, "... fell_back is set");
	is_int(rs ? ga_ruleset_size(rs) : 0, n_base, "... the built-in rules");
	ok(rs && !find_rule(rs, "site.good", NULL),
	   "... without the good file's rule either");
	ok(d.n && has_str(d.msgs[0], "/20-bad.rules:2: error: rule 'site.bad': "
	                             "unknown class 'nope'"),
	   "... the error names the file and line");
	ga_ruleset_destroy(rs);
	ga_diag_finish(&d);

	ga_diag_init(&d, "rules");
	rs = ga_rules_check_dir(dir, &d);
	ok(rs == NULL && d.errors >= 1, "check_dir: no fallback");
	ga_ruleset_destroy(rs);
	ga_diag_finish(&d);
	unlink(path);

	/* A NUL byte. */
	snprintf(path, sizeof(path), "%s/30-nul.rules", dir);
	write_file(path, nul_file, sizeof(nul_file) - 1);
	ga_diag_init(&d, "rules");
	rs = ga_rules_check_dir(dir, &d);
	ok(rs == NULL, "NUL byte: rejected");
	ok(d.n && has_str(d.msgs[0],
	                  "30-nul.rules: error: contains a NUL byte"),
	   "... with a message");
	ga_ruleset_destroy(rs);
	ga_diag_finish(&d);
	rs = ga_rules_load(dir, NULL, &fell_back);
	ok(rs && fell_back, "NUL byte: load falls back");
	ga_ruleset_destroy(rs);
	unlink(path);

	snprintf(path, sizeof(path), "%s/10-good.rules", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/README", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/.hidden.rules", dir);
	unlink(path);
	rmdir(dir);
	ga_ruleset_destroy(base);
}

/* PATTERN yields exactly the literals WANT (NULL-terminated list; an
 * empty list: none). */
static void expect_literals(const char *pattern, const char *const *want)
{
	char *got[16];
	size_t n = ga_literals_extract(pattern, got, 16), n_want = 0;
	bool same;

	while (want[n_want])
		n_want++;
	same = n == n_want;
	for (size_t i = 0; same && i < n; i++)
		same = !strcmp(got[i], want[i]);
	ok(same, "literals of /%s/", pattern);
	if (!same) {
		diag("  got %zu:", n);
		for (size_t i = 0; i < n; i++)
			diag("    '%s'", got[i]);
		diag("  want %zu:", n_want);
		for (size_t i = 0; i < n_want; i++)
			diag("    '%s'", want[i]);
	}
	for (size_t i = 0; i < n; i++)
		free(got[i]);
}

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NONE ((const char *const[]){NULL})

static void expect_cover(const char *pattern, const char *const *lits, int want,
                         const char *want_witness)
{
	size_t n = 0;
	char *witness;
	int rc;

	while (lits[n])
		n++;
	rc = ga_literals_cover(pattern, lits, NULL, n, &witness);
	is_int(rc, want, "/%s/ covered: %d", pattern, want);
	if (want_witness)
		is_str(witness, want_witness, "... not by '%s'", want_witness);
	else
		ok(witness == NULL, "... no witness");
	free(witness);
}

static void test_literals(void)
{
	char *got[2];

	expect_literals("CUDA out of memory", L("CUDA out of memory"));
	expect_literals("abcd|efghi", L("abcd", "efghi"));
	expect_literals("abcd|efg", NONE);
	expect_literals("abc", NONE);
	expect_literals("", NONE);
	expect_literals("ab(cdef|ghij)kl", NONE);
	expect_literals("foo(bar|baz)quux", L("quux"));
	expect_literals("(abcd|efgh)", NONE);
	expect_literals("x(a|b)yz|wxyz", NONE);
	expect_literals("(a|b)wxyz|stuv", L("wxyz", "stuv"));
	expect_literals("[abc]defg", L("defg"));
	expect_literals("[]|)(]abcd", L("abcd"));
	expect_literals("[^]x]abcd", L("abcd"));
	expect_literals("[[:alpha:]]+wxyz", L("wxyz"));
	expect_literals("[a\\]bcde]wxyz", L("wxyz"));
	expect_literals("colou?r mapping", L("r mapping"));
	expect_literals("abcde?fg", L("abcd"));
	expect_literals("abcde*fg", L("abcd"));
	expect_literals("abcde+fg", L("abcde"));
	expect_literals("abcde+?fg", L("abcde"));
	expect_literals("abcde*+fg", L("abcd"));
	expect_literals("abcdx{0,3}yz", L("abcd"));
	expect_literals("abcdx{0}yz", L("abcd"));
	expect_literals("abcdx{1,}yz", L("abcdx"));
	expect_literals("abcdx{2}yz", L("abcdx"));
	expect_literals("abcdx{2,5}?yz", L("abcdx"));
	expect_literals("ab{cdef", L("ab{cdef"));
	expect_literals("abcd.efghi", L("efghi"));
	expect_literals("^abcd$", L("abcd"));
	expect_literals("CUDA\\.error", L("CUDA.error"));
	expect_literals("\\(abcd\\)", L("(abcd)"));
	expect_literals("\\d+ abcd", L(" abcd"));
	expect_literals("ab\\bcdef\\sgh", L("cdef"));
	expect_literals("\\[Errno 28\\]", L("[Errno 28]"));
	expect_literals("a\\|bcd", L("a|bcd"));
	expect_literals("\\Qa.b*c\\E", L("a.b*c"));
	expect_literals("xy\\Qz.w\\Euv", L("xyz.wuv"));
	/* \Q..\E quotes metacharacters, '|' and '(' included. */
	expect_literals("\\Qab|cd\\E", L("ab|cd"));
	expect_literals("\\Qab(cd\\E", L("ab(cd"));
	/* A quantifier after \E applies to the last quoted character. */
	expect_literals("xyz\\Qabcd\\E?", L("xyzabc"));
	/* Escapes with arguments are not literals. */
	expect_literals("\\x41BCDE", L("BCDE"));
	expect_literals("\\x{41}BCDE", L("BCDE"));
	expect_literals("\\101BCDE", L("BCDE"));
	expect_literals("\\cABCDE", L("BCDE"));
	expect_literals("\\p{Lu}abcd", L("abcd"));
	expect_literals("\\pLabcde", L("abcde"));
	expect_literals("(?i)abcd", L("abcd"));
	expect_literals("(?i)out of memory|(?-i)OOM when",
	                L("out of memory", "OOM when"));
	/* Extended mode changes what blanks mean: no literal. */
	expect_literals("(?x)out of memory", NONE);
	expect_literals("(?ix)out of memory", NONE);
	expect_literals("(*UTF)abcd", NONE);

	/* Which patterns may match their literals in another case. */
	ok(!ga_literals_caseless("Error: (x|y)") &&
	           !ga_literals_caseless("(?:abcd)|(?s)ab.cd|(?<n>abcd)"),
	   "case-sensitive patterns");
	ok(ga_literals_caseless("(?i)abcd") &&
	           ga_literals_caseless("ab(?i:cd)ef") &&
	           ga_literals_caseless("ab(?si)cd") &&
	           ga_literals_caseless("(?-i)abcd"),
	   "patterns that set (or may set) caseless matching");

	/* Coverage of a pattern by a rule's own literals. */
	expect_cover("TERM_(DEADLINE|CPULIMIT): job killed",
	             (const char *[]){"TERM_DEADLINE", "term_cpulimit", NULL},
	             1, NULL);
	expect_cover("node was pre-?empted",
	             (const char *[]){"preempted", NULL}, 0,
	             "node was pre-empted");
	expect_cover("Resource[ _]exhausted",
	             (const char *[]){"Resource exhausted", NULL}, 0,
	             "Resource_exhausted");
	expect_cover("Exceeded (job|step) memory limit(?! at some point)",
	             (const char *[]){"Exceeded job memory limit",
	                              "exceeded step memory", NULL},
	             1, NULL);
	expect_cover("loss:\\s*nan\\b", (const char *[]){" nan", ":nan", NULL},
	             1, NULL);
	expect_cover("abcd.efgh", (const char *[]){"d.e", NULL}, 0,
	             "abcd~efgh");
	expect_cover("x(?i:Abcd|Defg)", (const char *[]){"xabcd", NULL}, 0,
	             "xDefg");
	expect_cover("(?=q)\\bfoo(?<n>bar)\\Q.*\\E(?#note)",
	             (const char *[]){"foobar.*", NULL}, 1, NULL);
	expect_cover("(?x) a b", (const char *[]){"ab", NULL}, -1, NULL);
	expect_cover("(a|b|c|d)(a|b|c|d)(a|b|c|d)(a|b|c|d)(a|b|c|d)",
	             (const char *[]){"a", NULL}, -1, NULL);

	/* At most MAX alternatives. */
	is_int(ga_literals_extract("abcd|efgh|ijkl", got, 2), 0,
	       "more alternatives than MAX: none");
}

/* A literal as written: word boundaries and tabs. */
static void test_literal_body(void)
{
	static const struct {
		const char *written, *body;
		unsigned flags;
	} good[] = {
	        {"out of memory", "out of memory", 0},
	        {" inf\\b", " inf", GA_PREFILTER_WORD_END},
	        {"\\bOOM when", "OOM when", GA_PREFILTER_WORD_START},
	        {"\\tnan\\b", "\tnan", GA_PREFILTER_WORD_END},
	        {"err\\t\\tnan", "err\t\tnan", 0},
	        /* Only "\t" is an escape: another backslash stays. */
	        {"dir\\c\\b", "dir\\c", GA_PREFILTER_WORD_END},
	};
	static const char *const bad[] = {
	        "\\b nan", /* a boundary next to a blank */
	        "nan \\b",
	        "nan\\t\\b", /* ... or next to a tab */
	        "\\b\\tnan",
	};
	char *body;
	unsigned flags;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		is_int(ga_rulefile_literal_body(good[i].written, &body, &flags),
		       0, "literal '%s' is valid", good[i].written);
		is_str(body, good[i].body, "literal '%s': its text",
		       good[i].written);
		is_int((int)flags, (int)good[i].flags, "literal '%s': flags",
		       good[i].written);
		free(body);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		is_int(ga_rulefile_literal_body(bad[i], &body, &flags), -EINVAL,
		       "literal '%s' is refused", bad[i]);
		ok(body == NULL, "literal '%s': no text", bad[i]);
	}
}

/* Each extracted literal really is in every match: check a few patterns
 * against matching subjects through a rule. */
static void test_builtin(void)
{
	struct ga_diag d;
	struct ga_ruleset *rs;
	const uint32_t *u;
	size_t n;

	ga_diag_init(&d, "rules");
	rs = ga_rules_check_dir(NULL, &d);
	ok(rs != NULL, "built-in rules load");
	/* No built-in pattern is hidden behind its rule's own literals, and
	 * none is unfiltered. */
	is_int(d.warnings, 0, "built-in rules load without a warning");
	for (size_t i = 0; i < d.n; i++)
		diag("  %s", d.msgs[i]);
	ga_diag_finish(&d);
	if (!rs)
		return;
	n = ga_ruleset_unfiltered(rs, &u);
	is_int(n, 0, "every built-in rule has a literal");
	for (size_t i = 0; i < n; i++)
		diag("unfiltered: %s", ga_rule_id(ga_ruleset_rule(rs, i)));
	ok(ga_ruleset_prefilter(rs) != NULL, "the built-in prefilter exists");
	for (size_t i = 1; i < ga_ruleset_size(rs); i++) {
		int p0 = ga_rule_priority(ga_ruleset_rule(rs, i - 1));
		int p1 = ga_rule_priority(ga_ruleset_rule(rs, i));

		if (p0 < p1) {
			ok(false, "rules in priority order at %zu", i);
			break;
		}
	}
	ga_ruleset_destroy(rs);
}

int main(void)
{
	ga_log_set_sink(quiet, NULL);
	test_errors();
	test_accepts();
	test_order();
	test_layering();
	test_exclusions();
	test_dir();
	test_literals();
	test_literal_body();
	test_builtin();
	return tap_done();
}
