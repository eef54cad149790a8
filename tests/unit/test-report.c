/* SPDX-License-Identifier: MIT */
/* The report model and the state transport: JSON round trips, the root
 * cause, and untrusted input rejected or bounded. */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"
#include "tap.h"
#include "util.h"

static struct ga_ruleset *rs;

static void quiet(enum ga_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

static void feed_verdict(const char *log, int code, struct ga_verdict *v,
                         struct ga_buf *state)
{
	struct ga_classifier *c = ga_classifier_create(rs);
	struct ga_status st;

	ga_status_from_int(&st, code);
	ga_classifier_feed(c, log, strlen(log));
	if (state)
		ga_classifier_write_state(c, state);
	if (ga_classifier_finish(c, &st, v) < 0)
		ok(false, "ga_classifier_finish");
	ga_classifier_destroy(c);
}

static void test_json_parser(void)
{
	const char *err = NULL;
	struct ga_json *v;
	int64_t n;

	const char *doc =
	        "{\"a\": [1, -2.5e3, true, null, \"x\\u00e9\\ud83d\\ude00\"],"
	        " \"b\": {\"c\": 42}}";

	v = ga_json_parse(doc, strlen(doc), &err);
	ok(v != NULL, "parse a document (%s)", err ? err : "ok");
	if (v) {
		const struct ga_json *a = ga_json_get(v, "a");

		ok(a && a->type == GA_JSON_ARRAY && a->n == 5, "array of 5");
		ok(a && a->items[1].number == -2500.0 && !a->items[1].is_int,
		   "a float");
		is_str(a ? a->items[4].string : NULL,
		       "x\xc3\xa9\xf0\x9f\x98\x80",
		       "escapes and a surrogate pair decode to UTF-8");
		ok(ga_json_get_int(ga_json_get(v, "b"), "c", &n) && n == 42,
		   "nested integer");
		ok(ga_json_get_str(v, "a") == NULL, "type mismatch: NULL");
	}
	ga_json_free(v);

	static const char *bad[] = {
	        "",          "{",           "[1,]",
	        "{\"a\" 1}", "\"\\u0000\"", "\"\\ud800\"",
	        "\"a\x01\"", "\"\xff\"",    "1 2",
	        "tru",       "{\"a\":1}}",  "[01x]",
	};
	for (size_t i = 0; i < GA_ARRAY_LEN(bad); i++) {
		err = NULL;
		v = ga_json_parse(bad[i], strlen(bad[i]), &err);
		ok(v == NULL && err != NULL, "rejected: '%s' (%s)", bad[i],
		   err ? err : "-");
		ga_json_free(v);
	}
	/* Nesting is bounded. */
	{
		char deep[200];

		memset(deep, '[', 100);
		memset(deep + 100, ']', 100);
		v = ga_json_parse(deep, 200, &err);
		ok(v == NULL && !strcmp(err, "nested too deeply"),
		   "100 levels: rejected");
	}
}

static void test_state_transport(void)
{
	const char *log = "epoch 1 loss 0.3\n"
	                  "[rank0]: RuntimeError: CUDA out of memory. Tried "
	                  "to allocate 2.00 GiB\n";
	struct ga_buf state;
	struct ga_verdict direct, via;
	struct ga_classifier *c;
	struct ga_status st;
	const char *err = NULL;

	ga_buf_init(&state);
	ga_verdict_init(&direct);
	ga_verdict_init(&via);
	feed_verdict(log, 1, &direct, &state);
	c = ga_classifier_create(rs);
	is_int(ga_classifier_read_state(c, state.data, state.len, &err), 0,
	       "state read back");
	ga_status_from_int(&st, 1);
	is_int(ga_classifier_finish(c, &st, &via), 0, "finish after the state");
	is_str(ga_class_name(via.cls), ga_class_name(direct.cls),
	       "same class through the transport");
	is_str(via.rule, direct.rule, "same rule");
	is_int(via.lines, direct.lines, "same line count");
	ok(via.n_evidence == direct.n_evidence && via.n_evidence &&
	           via.evidence[0].line == 2,
	   "same evidence");
	is_str(via.tail, direct.tail, "same tail");
	ga_classifier_destroy(c);

	/* Untrusted: malformed or wrongly typed state is refused. */
	c = ga_classifier_create(rs);
	is_int(ga_classifier_read_state(c, "{\"lines\":\"x\"}", 13, &err),
	       -EINVAL, "wrong types: -EINVAL");
	{
		const char *s = "{\"v\":1,\"lines\":1,\"bytes\":1,"
		                "\"long_lines\":0,\"tail\":\"\",\"rules\":"
		                "[{\"id\":\"no.such.rule\",\"count\":5,"
		                "\"hits\":[]}]}";

		is_int(ga_classifier_read_state(c, s, strlen(s), &err), 0,
		       "unknown rule ids are ignored");
	}
	ga_classifier_destroy(c);
	ga_verdict_finish(&direct);
	ga_verdict_finish(&via);
	ga_buf_finish(&state);
}

static int parse(const char *text, struct ga_report *r, const char **err)
{
	return ga_report_parse_json(text, strlen(text), r, err);
}

static void test_report(void)
{
	struct ga_report r, back;
	struct ga_task_report *t;
	struct ga_buf j, j2;
	const char *err = NULL;

	ga_report_init(&r);
	ga_report_put(&r.job_id, "1234");
	ga_report_put(&r.step_id, "0");
	ga_report_put(&r.job_name, "train\r\nBcc: x@y");
	ok(ga_report_add_recipient(&r, "alice@example.org") == 0,
	   "recipient added");

	/* Rank 1 runs out of memory first; rank 0 times out later. */
	t = ga_report_add_task(&r);
	t->task_id = 0;
	t->end_time = 2000;
	feed_verdict("[rank0]: Watchdog caught collective operation timeout\n",
	             1, &t->verdict, NULL);
	t = ga_report_add_task(&r);
	t->task_id = 1;
	t->end_time = 1000;
	feed_verdict("torch.OutOfMemoryError: CUDA out of memory.\n", 1,
	             &t->verdict, NULL);
	t = ga_report_add_task(&r);
	t->task_id = 2;
	t->end_time = 900;
	feed_verdict("done\n", 0, &t->verdict, NULL);
	ga_report_choose_root(&r);
	is_int(r.root_task, 1, "root cause: the failing task that ended first");
	is_str(ga_class_name(ga_report_class(&r)), "cuda_oom", "report class");

	ga_buf_init(&j);
	ga_report_write_json(&r, &j);
	ga_report_init(&back);
	is_int(ga_report_parse_json(j.data, j.len, &back, &err), 0,
	       "report parses back (%s)", err ? err : "ok");
	ga_buf_init(&j2);
	ga_report_write_json(&back, &j2);
	is_str(j2.data, j.data, "write(parse(write(r))) == write(r)");
	is_str(back.job_name, "train\r\nBcc: x@y",
	       "strings survive byte for byte (headers sanitise later)");

	/* Untrusted input: the schema number and types are checked. */
	ga_report_finish(&back);
	ga_report_init(&back);
	is_int(parse("{\"schema\":2,\"job_id\":\"1\",\"tasks\":[]}", &back,
	             &err),
	       -EINVAL, "unknown schema: -EINVAL");
	ga_report_finish(&back);
	ga_report_init(&back);
	is_int(parse("{\"schema\":1,\"job_id\":\"1\",\"tasks\":"
	             "[{\"task_id\":-1,\"verdict\":{}}]}",
	             &back, &err),
	       -EINVAL, "negative task id");
	ga_report_finish(&back);
	ga_report_init(&back);
	is_int(parse("{\"schema\":1,\"tasks\":[]}", &back, &err), -EINVAL,
	       "a job id is required");
	ga_report_finish(&back);

	ga_buf_finish(&j);
	ga_buf_finish(&j2);
	ga_report_finish(&r);
}

/* The gloo case: rank 1 raises, rank 0 then fails in the next collective
 * and may even exit first.  Both end within the same second. */
static void test_root_across_ranks(void)
{
	struct ga_report r;
	struct ga_task_report *t;
	struct ga_buf j;
	struct ga_report back;
	const char *err = NULL;

	ga_report_init(&r);
	ga_report_put(&r.job_id, "77");
	t = ga_report_add_task(&r);
	t->task_id = 0;
	t->end_time = 1000;
	t->end_time_ns = 1000LL * 1000000000LL + 200000000LL;
	feed_verdict("RuntimeError: [../third_party/gloo/gloo/transport/tcp/"
	             "pair.cc:598] Connection closed by peer "
	             "[10.0.0.2]:40000\n",
	             1, &t->verdict, NULL);
	t = ga_report_add_task(&r);
	t->task_id = 1;
	t->end_time = 1000;
	t->end_time_ns = 1000LL * 1000000000LL + 700000000LL;
	feed_verdict("Traceback (most recent call last):\n"
	             "  File \"train.py\", line 9, in <module>\n"
	             "KeyError: 'step'\n",
	             1, &t->verdict, NULL);
	is_str(ga_class_name(r.tasks[0].verdict.cls), "nccl",
	       "rank 0's own verdict is the communication failure");
	ga_report_choose_root(&r);
	is_int(r.root_task, 1,
	       "near-tie: the echo on rank 0 does not outrank rank 1");
	is_str(ga_class_name(ga_report_class(&r)), "code_error",
	       "the report's class is rank 1's exception");

	/* Sub-second order decides between two causes of their own. */
	feed_verdict("torch.OutOfMemoryError: CUDA out of memory.\n", 1,
	             &r.tasks[0].verdict, NULL);
	ga_report_choose_root(&r);
	is_int(r.root_task, 0, "same second, earlier nanosecond end wins");

	/* Far apart, the earlier end wins even for an echo. */
	feed_verdict("RuntimeError: Connection closed by peer\n", 1,
	             &r.tasks[0].verdict, NULL);
	r.tasks[0].end_time = 900;
	r.tasks[0].end_time_ns = 900LL * 1000000000LL;
	ga_report_choose_root(&r);
	is_int(r.root_task, 0, "100 s earlier: not a near-tie");

	/* Without nanoseconds (an older report), seconds decide. */
	r.tasks[0].end_time_ns = 0;
	r.tasks[0].end_time = 1000;
	r.tasks[1].end_time_ns = 0;
	ok(ga_report_task_precedes(&r.tasks[1], &r.tasks[0]) &&
	           !ga_report_task_precedes(&r.tasks[0], &r.tasks[1]),
	   "whole seconds tie: the echo still loses");

	r.tasks[1].end_time_ns = 1000LL * 1000000000LL + 123456789LL;
	ga_buf_init(&j);
	ga_report_write_json(&r, &j);
	ok(strstr(j.data, "\"end_time_ns\":1000123456789") != NULL,
	   "end_time_ns written when known");
	ok(strstr(j.data, "\"end_time\":1000,\"capture") == NULL &&
	           strstr(j.data, "\"end_time_ns\":0") == NULL,
	   "end_time_ns left out when unknown");
	ga_report_init(&back);
	is_int(ga_report_parse_json(j.data, j.len, &back, &err), 0,
	       "parses back (%s)", err ? err : "ok");
	ok(back.n_tasks == 2 && back.tasks[1].end_time_ns == 1000123456789LL &&
	           back.tasks[0].end_time_ns == 0,
	   "end_time_ns round trip");
	ga_report_finish(&back);
	ga_buf_finish(&j);
	ga_report_finish(&r);
}

int main(void)
{
	ga_log_set_sink(quiet, NULL);
	rs = ga_rules_load(NULL, NULL, NULL);
	if (!rs)
		tap_skip_all("no built-in rules");
	test_json_parser();
	test_state_transport();
	test_report();
	test_root_across_ranks();
	ga_ruleset_destroy(rs);
	return tap_done();
}
