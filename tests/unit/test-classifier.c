/* SPDX-License-Identifier: MIT */
/* The streaming classifier: chunking independence, log quirks (colour
 * codes, rank prefixes, progress bars, long lines, NUL bytes), the tail,
 * and the ordering of evidence into a verdict. */
#include "classifier.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "linereader.h"
#include "log.h"
#include "tap.h"

static struct ga_ruleset *builtin;

static void quiet(enum ga_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

/* Classify DATA fed in chunks (MODE 0 whole, 1 byte by byte, 2 random
 * sizes up to MAXCHUNK from SEED) into V. */
static void classify(const struct ga_ruleset *rs, const char *data, size_t len,
                     int mode, uint64_t seed, size_t maxchunk,
                     const struct ga_status *st, struct ga_verdict *v)
{
	struct ga_classifier *c = ga_classifier_create(rs);
	struct tap_rng rng = {seed | 1};
	size_t pos = 0;

	ga_verdict_init(v);
	if (!c) {
		ok(false, "ga_classifier_create");
		return;
	}
	while (pos < len) {
		size_t n = len - pos;

		if (mode == 1)
			n = 1;
		else if (mode == 2 && n > 1)
			n = 1 + tap_below(&rng, maxchunk < n ? maxchunk : n);
		ga_classifier_feed(c, data + pos, n);
		pos += n;
	}
	if (ga_classifier_finish(c, st, v) < 0)
		ok(false, "ga_classifier_finish");
	ga_classifier_destroy(c);
}

/* Everything a verdict says, as one string. */
static char *describe(const struct ga_verdict *v)
{
	struct ga_buf b;

	ga_buf_init(&b);
	ga_verdict_write_json(v, &b);
	ga_buf_printf(&b, "\ntail(%zu):\n", v->tail_lines);
	ga_buf_puts(&b, v->tail ? v->tail : "(null)");
	return ga_buf_steal(&b);
}

static void expect_same(const char *name, const struct ga_ruleset *rs,
                        const char *data, size_t len, size_t maxchunk,
                        int chunkings)
{
	struct ga_verdict v;
	struct ga_status st;
	char *whole, *other;
	bool same = true;

	ga_status_from_int(&st, 1);
	classify(rs, data, len, 0, 0, 0, &st, &v);
	whole = describe(&v);
	ga_verdict_finish(&v);
	for (int k = 0; k < chunkings && same; k++) {
		classify(rs, data, len, k == 0 ? 1 : 2, (uint64_t)k * 104729,
		         maxchunk, &st, &v);
		other = describe(&v);
		ga_verdict_finish(&v);
		same = whole && other && !strcmp(whole, other);
		if (!same) {
			diag("chunking %d differs", k);
			is_str(other, whole, "%s: chunking %d", name, k);
		}
		free(other);
	}
	ok(same, "%s: same verdict, evidence, counts and tail in %d chunkings",
	   name, chunkings);
	free(whole);
}

struct result {
	enum ga_class cls;
	char rule[64];
	uint64_t line;  /* first evidence line */
	char text[600]; /* first evidence text */
	size_t n_evidence;
	uint64_t lines, long_lines;
	uint64_t want_line; /* in: a line to look for in the evidence */
	bool has_line;      /* out: it is there */
};

/* LEN (size_t)-1: strlen(LOG). */
static void verdict_of(const char *log, size_t len, const struct ga_status *st,
                       struct result *r)
{
	struct ga_verdict v;

	if (len == (size_t)-1)
		len = strlen(log);

	classify(builtin, log, len, 0, 0, 0, st, &v);
	uint64_t want = r->want_line;

	memset(r, 0, sizeof(*r));
	r->want_line = want;
	r->cls = v.cls;
	snprintf(r->rule, sizeof(r->rule), "%s", v.rule ? v.rule : "(none)");
	if (v.n_evidence) {
		r->line = v.evidence[0].line;
		snprintf(r->text, sizeof(r->text), "%s", v.evidence[0].text);
	}
	r->n_evidence = v.n_evidence;
	for (size_t i = 0; i < v.n_evidence; i++)
		if (v.evidence[i].line == r->want_line)
			r->has_line = true;
	r->lines = v.lines;
	r->long_lines = v.long_lines;
	ga_verdict_finish(&v);
}

/* LOG with exit status CODE (>= 0 exit code, < 0 signal, UNKNOWN_STATUS)
 * gives class CLS by RULE, with evidence at LINE (0: a status fact, or
 * none for success/unknown). */
#define UNKNOWN_STATUS (-1000)
static void expect(const char *name, const char *log, int code,
                   enum ga_class cls, const char *rule, uint64_t line)
{
	struct ga_status st;
	struct result r;

	if (code == UNKNOWN_STATUS)
		ga_status_init(&st);
	else
		ga_status_from_int(&st, code);
	memset(&r, 0, sizeof(r));
	r.want_line = line;
	verdict_of(log, strlen(log), &st, &r);
	is_str(ga_class_name(r.cls), ga_class_name(cls), "%s: class", name);
	is_str(r.rule, rule, "%s: rule", name);
	if (!r.rule[0] || !strcmp(rule, "(none)"))
		is_int(r.n_evidence, 0, "%s: no evidence", name);
	else if (!ok(r.has_line, "%s: evidence at line %llu", name,
	             (unsigned long long)line))
		diag("  first evidence at line %llu",
		     (unsigned long long)r.line);
}

static void test_ordering(void)
{
	struct ga_buf b;
	struct ga_status st;
	struct ga_verdict v;
	char *log;

	/* One rank runs out of memory, the others time out for minutes. */
	ga_buf_init(&b);
	ga_buf_puts(&b, "[rank0]: epoch 3 step 100 loss 1.234\n");
	ga_buf_puts(&b,
	            "[rank1]: torch.OutOfMemoryError: CUDA out of memory. "
	            "Tried to allocate 2.00 GiB (GPU 1; 79.11 GiB total)\n");
	for (int i = 0; i < 300; i++)
		ga_buf_printf(&b,
		              "[rank%d]:[E ProcessGroupNCCL.cpp:563] [Rank %d] "
		              "Watchdog caught collective operation timeout: "
		              "WorkNCCL(SeqNum=%d, OpType=ALLREDUCE) ran for "
		              "600000 milliseconds before timing out.\n",
		              i % 8, i % 8, 1000 + i);
	log = ga_buf_steal(&b);
	expect("OOM then NCCL timeouts", log, 1, GA_CLASS_CUDA_OOM,
	       "cuda.oom.torch", 2);
	ga_status_from_int(&st, 1);
	classify(builtin, log, strlen(log), 0, 0, 0, &st, &v);
	/* The OOM exception line is claimed by the OOM rule: the generic
	 * exception rule is a fallback and does not see it. */
	ok(v.n_others == 1 && v.others[0].cls == GA_CLASS_NCCL &&
	           v.others[0].line == 3,
	   "... nccl (line 3) is also seen, the exception line is not code_error");
	ok(v.n_evidence >= 1 &&
	           has_str(v.evidence[0].text,
	                   "[rank1]: torch."
	                   "OutOfMemoryError: CUDA out of memory."),
	   "... evidence is the cleaned line, rank prefix included");
	ga_verdict_finish(&v);
	free(log);

	/* The NCCL timeouts printed first do not change it. */
	expect("NCCL timeouts then OOM",
	       "[rank0]: Watchdog caught collective operation timeout\n"
	       "[rank0]: Watchdog caught collective operation timeout\n"
	       "[rank1]: RuntimeError: CUDA error: out of memory\n",
	       1, GA_CLASS_CUDA_OOM, "cuda.oom.runtime", 3);
	expect("NCCL alone",
	       "[rank0]: Watchdog caught collective operation timeout\n", 1,
	       GA_CLASS_NCCL, "nccl.watchdog", 1);

	expect("time limit after tracebacks",
	       "Traceback (most recent call last):\n"
	       "  File \"train.py\", line 3, in <module>\n"
	       "KeyboardInterrupt\n"
	       "RuntimeError: CUDA error: an illegal memory access was "
	       "encountered\n"
	       "slurmstepd: error: *** JOB 36 ON node01 CANCELLED AT "
	       "2026-11-30T08:10:44 DUE TO TIME LIMIT ***\n",
	       -SIGTERM, GA_CLASS_TIME_LIMIT, "slurm.time-limit", 5);
	expect("cancelled (no time limit)",
	       "ValueError: x\nslurmstepd: error: *** JOB 37 ON node01 "
	       "CANCELLED AT 2026-11-30T08:09:24 ***\n",
	       -SIGTERM, GA_CLASS_CANCELLED, "slurm.cancelled", 2);

	expect("code_error is the fallback",
	       "Traceback (most recent call last):\n"
	       "  File \"train.py\", line 3, in <module>\n"
	       "ValueError: too many values to unpack\n",
	       1, GA_CLASS_CODE_ERROR, "python.exception", 3);
	expect("a concrete cause beats the exception line",
	       "Traceback (most recent call last):\n"
	       "RuntimeError: CUDA error: an illegal memory access was "
	       "encountered\n",
	       1, GA_CLASS_CUDA_KERNEL, "cuda.kernel-fault", 2);
	expect("traceback cut off",
	       "Traceback (most recent call last):\n"
	       "  File \"x.py\", line 1\n",
	       1, GA_CLASS_CODE_ERROR, "python.traceback", 1);

	expect("nan with exit 0", "step 10 loss: 2.1\nstep 20 loss: nan\n", 0,
	       GA_CLASS_NAN, "nan.loss", 2);
	expect("nan with exit 1", "step 20 loss=nan\nValueError: x\n", 1,
	       GA_CLASS_NAN, "nan.loss", 1);
	expect("exception with exit 0",
	       "Traceback (most recent call last):\nValueError: x\n", 0,
	       GA_CLASS_SUCCESS, "(none)", 0);
	/* Without a status, success needs positive evidence. */
	expect("unknown status, no evidence", "hello\nworld\n", UNKNOWN_STATUS,
	       GA_CLASS_UNKNOWN, "(none)", 0);
	expect("unknown status, empty log", "", UNKNOWN_STATUS,
	       GA_CLASS_UNKNOWN, "(none)", 0);
	expect("unknown status, OOM in the log",
	       "CUDA out of memory. Tried to allocate\n", UNKNOWN_STATUS,
	       GA_CLASS_CUDA_OOM, "cuda.oom.torch", 1);
	expect("failed status, no evidence", "hello\nworld\n", 1,
	       GA_CLASS_UNKNOWN, "(none)", 0);
	expect("exit 0, no evidence", "hello\n", 0, GA_CLASS_SUCCESS, "(none)",
	       0);

	expect("SIGSEGV", "step 1\n", -SIGSEGV, GA_CLASS_SEGFAULT,
	       "exit.crash-signal", 0);
	expect("exit 139 from a shell", "step 1\n", 139, GA_CLASS_SEGFAULT,
	       "exit.crash-signal", 0);
	expect("SIGSEGV with the message", "Segmentation fault (core dumped)\n",
	       -SIGSEGV, GA_CLASS_SEGFAULT, "native.crash", 1);
	expect("SIGABRT + traceback",
	       "Traceback (most recent call last):\nValueError: x\n", -SIGABRT,
	       GA_CLASS_CODE_ERROR, "python.exception", 2);
	expect("SIGABRT alone", "step 1\n", -SIGABRT, GA_CLASS_SEGFAULT,
	       "exit.abort", 0);
	expect("SIGKILL alone", "step 1\n", -SIGKILL, GA_CLASS_UNKNOWN,
	       "(none)", 0);

	ga_status_from_int(&st, -SIGSEGV);
	classify(builtin, "x\n", 2, 0, 0, 0, &st, &v);
	ok(v.n_evidence == 1 && v.evidence[0].line == 0 &&
	           !strcmp(v.evidence[0].text, "terminated by SIGSEGV"),
	   "status evidence: 'terminated by SIGSEGV' at line 0");
	ga_verdict_finish(&v);

	ga_status_init(&st);
	st.known = true;
	st.exit_code = 1;
	st.state = GA_STATE_TIMEOUT;
	classify(builtin, "ValueError: x\n", 14, 0, 0, 0, &st, &v);
	ok(v.cls == GA_CLASS_TIME_LIMIT && v.n_evidence == 1 &&
	           v.evidence[0].line == 0 &&
	           !strcmp(v.evidence[0].text, "scheduler state TIMEOUT"),
	   "state TIMEOUT: time_limit, evidence 'scheduler state TIMEOUT'");
	ga_verdict_finish(&v);

	/* Equal priorities (host_oom, disk_full, cuda_oom: 80): the
	 * earliest line wins, whichever rule comes first in the list. */
	expect("tie: disk full first",
	       "OSError: [Errno 28] No space left on device\n"
	       "MemoryError\nCUDA out of memory\n",
	       1, GA_CLASS_DISK_FULL, "storage.full", 1);
	expect("tie: host oom first",
	       "step\nMemoryError\nOSError: [Errno 28] No space left on device\n"
	       "CUDA out of memory\n",
	       1, GA_CLASS_HOST_OOM, "python.memory-error", 2);
	expect("tie: cuda oom first",
	       "CUDA out of memory\nMemoryError\n"
	       "No space left on device\n",
	       1, GA_CLASS_CUDA_OOM, "cuda.oom.torch", 1);

	/* Evidence of the deciding class from several rules, by line. */
	ga_status_from_int(&st, 1);
	{
		static const char t[] =
		        "a\nCUDA error: out of memory\nb\n"
		        "CUDA out of memory\nCUDA out of memory\n";

		classify(builtin, t, sizeof(t) - 1, 0, 0, 0, &st, &v);
	}
	ok(v.cls == GA_CLASS_CUDA_OOM && v.n_evidence == 3 &&
	           v.evidence[0].line == 2 && v.evidence[1].line == 4 &&
	           v.evidence[2].line == 5,
	   "evidence of one class sorted by line");
	is_str(v.rule, "cuda.oom.runtime", "... decided by the earliest rule");
	ga_verdict_finish(&v);
}

static void test_fallback_and_fatal(void)
{
	/* A KeyError on one rank, connection errors on the others: the
	 * exception is the deeper cause (code_error ranks above nccl). */
	expect("exception on a rank, gloo echoes",
	       "[rank1]: KeyError: 'label'\n"
	       "[rank0]: RuntimeError: [../gloo/transport/tcp/pair.cc:598] "
	       "Connection closed by peer [127.0.0.1]:1234\n",
	       1, GA_CLASS_CODE_ERROR, "python.exception", 1);
	/* An exception line that names an NCCL error is nccl only. */
	expect("RuntimeError naming NCCL",
	       "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, "
	       "unhandled system error, NCCL version 2.18.1\n",
	       1, GA_CLASS_NCCL, "nccl.error", 1);
	/* Launcher wrappers are not the job's exception. */
	expect("ChildFailedError alone",
	       "torch.distributed.elastic.multiprocessing.errors."
	       "ChildFailedError: \n",
	       1, GA_CLASS_UNKNOWN, "launcher.child-failed", 1);
	/* A batch script that survived its child's abort exits 0: the shell's
	 * report proves the failure, and the cause is the bad_alloc. */
	expect("child aborted, script exit 0",
	       "terminate called after throwing an instance of "
	       "'std::bad_alloc'\n  what():  std::bad_alloc\n"
	       "job.sh: line 5:  4034 Aborted                 build/prog\n"
	       "prog exited with 134\n",
	       0, GA_CLASS_HOST_OOM, "native.bad-alloc", 1);
	/* Without the shell's report, a handled bad_alloc at exit 0 is not a
	 * failure. */
	expect("handled bad_alloc, exit 0",
	       "caught std::bad_alloc, retrying with smaller blocks\ndone\n", 0,
	       GA_CLASS_SUCCESS, "(none)", 0);
}

static void test_quirks(void)
{
	struct ga_status failed;
	struct result r = {0};
	struct ga_buf b;
	char *x;

	ga_status_from_int(&failed, 1);

	verdict_of("\x1b[31mCUDA out\x1b[0m of memory. Tried to allocate\n",
	           (size_t)-1, &failed, &r);
	is_int(r.cls, GA_CLASS_CUDA_OOM, "colour codes splitting a literal");
	is_str(r.text, "CUDA out of memory. Tried to allocate",
	       "... evidence without escape sequences");
	verdict_of("\x1b]0;title\x07\x1b[1;32mok\x1b[m CUDA out of memory\n",
	           (size_t)-1, &failed, &r);
	is_str(r.text, "ok CUDA out of memory", "OSC title and CSI removed");

	expect("[rankN]: prefix and an anchored rule",
	       "[rank3]: Traceback (most recent call last):\n"
	       "[rank3]:   File \"x.py\", line 1\n"
	       "[rank3]: ValueError: bad\n",
	       1, GA_CLASS_CODE_ERROR, "python.exception", 3);
	expect("srun -l prefix",
	       "3: Traceback (most recent call last):\n"
	       "3: ValueError: bad\n",
	       1, GA_CLASS_CODE_ERROR, "python.exception", 2);
	expect("[default0]: prefix", "[default0]:ValueError: bad\n", 1,
	       GA_CLASS_CODE_ERROR, "python.exception", 1);
	expect("both prefixes", "0: [rank0]: KeyError: 'x'\n", 1,
	       GA_CLASS_CODE_ERROR, "python.exception", 1);
	expect("not a rank prefix", "step 3: ValueError: bad\n", 1,
	       GA_CLASS_UNKNOWN, "(none)", 0);

	/* An overlong line is matched on its first GA_SEGMENT_MAX bytes. */
	x = malloc(GA_SEGMENT_MAX + 1);
	memset(x, 'x', GA_SEGMENT_MAX);
	x[GA_SEGMENT_MAX] = '\0';
	ga_buf_init(&b);
	ga_buf_puts(&b, "start\n");
	ga_buf_puts(&b, x);
	ga_buf_puts(&b, " CUDA out of memory\n");
	verdict_of(b.data, b.len, &failed, &r);
	is_int(r.cls, GA_CLASS_UNKNOWN,
	       "literal past the long line's prefix: "
	       "not seen");
	is_int(r.long_lines, 1, "... the long line is counted");
	is_int(r.lines, 2, "... lines counted");
	ga_buf_reset(&b);
	ga_buf_puts(&b, "CUDA out of memory ");
	ga_buf_puts(&b, x);
	ga_buf_puts(&b, "\nnext\n");
	verdict_of(b.data, b.len, &failed, &r);
	is_int(r.cls, GA_CLASS_CUDA_OOM, "literal in the long line's prefix");
	is_int(r.line, 1, "... at line 1");
	is_int(strlen(r.text), GA_EVIDENCE_TEXT_MAX, "... text cut to 512");
	is_int(r.long_lines, 1, "... counted");
	ga_buf_finish(&b);
	free(x);

	verdict_of("a\0b\nCUDA out of memory\0\0junk\n", 29, &failed, &r);
	is_int(r.cls, GA_CLASS_CUDA_OOM, "NUL bytes");
	is_int(r.line, 2, "... line numbers past NUL bytes");
	is_str(r.text, "CUDA out of memoryjunk", "... NUL dropped from text");

	verdict_of("step 1\nCUDA out of memory", (size_t)-1, &failed, &r);
	is_int(r.cls, GA_CLASS_CUDA_OOM, "no final newline");
	is_int(r.line, 2, "... line 2");
	is_int(r.lines, 2, "... 2 lines");

	verdict_of("epoch 1:  10%|#   |\repoch 1:  20%|##  |\r"
	           "CUDA out of memory\rx\nnext\n",
	           (size_t)-1, &failed, &r);
	is_int(r.cls, GA_CLASS_CUDA_OOM, "\\r-joined progress bar");
	is_int(r.line, 1, "... line 1");
	is_str(r.text, "CUDA out of memory", "... the segment is the evidence");
	is_int(r.lines, 2, "... 2 lines");

	verdict_of("a\r\nb\r\nCUDA out of memory\r\n", (size_t)-1, &failed, &r);
	is_int(r.line, 3, "CRLF: line numbers like LF");
	is_str(r.text, "CUDA out of memory", "... no CR in the text");

	/* Case: the prefilter folds, the pattern decides. */
	verdict_of("cuda OUT of MEMORY\n", (size_t)-1, &failed, &r);
	is_int(r.cls, GA_CLASS_CUDA_OOM, "caseless rule");
	verdict_of("watchdog caught collective operation timeout\n", (size_t)-1,
	           &failed, &r);
	is_int(r.cls, GA_CLASS_UNKNOWN, "case-sensitive rule");
}

static void test_tail(void)
{
	struct ga_classifier *c = ga_classifier_create(builtin);
	struct ga_verdict v;
	struct ga_buf b;

	ga_buf_init(&b);
	for (int i = 1; i <= 100; i++)
		ga_buf_printf(&b, "line %d\n", i);
	ga_buf_puts(&b, "bar 10%\rbar 50%\rbar 100%\n");
	ga_buf_puts(&b, "\x1b[1mbold\x1b[0m\r\n");
	ga_buf_puts(&b, "trailing cr\r\r\n");
	ga_buf_puts(&b, "last, unterminated");
	ga_classifier_set_tail(c, 5, 16 * 1024);
	ga_classifier_feed(c, b.data, b.len);
	ga_verdict_init(&v);
	ga_classifier_finish(c, NULL, &v);
	is_str(v.tail,
	       &"line 99\nline 100\nbar 100%\nbold\ntrailing cr\n"
	        "last, unterminated\n"[8],
	       "tail: last 5 lines, last \\r segment, cleaned");
	is_int(v.tail_lines, 5, "tail: 5 lines");
	/* finish may be called again and gives the same */
	{
		char *first = v.tail ? strdup(v.tail) : NULL;

		ga_classifier_finish(c, NULL, &v);
		is_str(v.tail, first, "finish twice: same tail");
		is_int(v.lines, 104, "finish twice: same line count");
		free(first);
	}
	ga_verdict_finish(&v);
	ga_classifier_destroy(c);

	/* A byte limit: the cut first line is dropped. */
	c = ga_classifier_create(builtin);
	ga_classifier_set_tail(c, 60, 20);
	ga_classifier_feed(c, b.data, 700); /* ends inside "line 99" */
	ga_classifier_feed(c, "\n", 1);
	ga_verdict_init(&v);
	ga_classifier_finish(c, NULL, &v);
	/* The ring holds "ne 87\nline 88\nline \n". */
	is_str(v.tail, "line 88\nline \n",
	       "tail: byte limit drops the cut line");
	is_int(v.tail_lines, 2, "tail: 2 lines fit");
	ga_verdict_finish(&v);
	ga_classifier_destroy(c);

	/* No tail at all. */
	c = ga_classifier_create(builtin);
	ga_classifier_set_tail(c, 0, 0);
	ga_classifier_feed(c, b.data, b.len);
	ga_verdict_init(&v);
	ga_classifier_finish(c, NULL, &v);
	is_str(v.tail, "", "tail disabled: empty");
	is_int(v.lines, 104, "tail disabled: lines still counted");
	ga_verdict_finish(&v);
	ga_classifier_destroy(c);
	ga_buf_finish(&b);
}

/* A log with a bit of everything, built from a fixed seed. */
static char *mixed_log(size_t pieces, size_t *len)
{
	static const char *const lines[] = {
	        "epoch 1 step %d loss 2.3%d lr 1e-4 tok/s 12%d\n",
	        " %d%%|#####     | %d/100 [00:10<00:12, 2.%dit/s]\r",
	        "[rank%d]: Watchdog caught collective operation timeout %d%d\n",
	        "%d: Traceback (most recent call last):%d%d\n",
	        "\x1b[31mCUDA out\x1b[0m of memory %d %d %d\n",
	        "warning: \xe2\x80\x9c"
	        "deprecated\xe2\x80\x9d %d \xff"
	        " %d %d\r\n",
	        "OSError: [Errno 28] No space left on device %d%d%d\n",
	        "loss: nan at step %d %d %d\n",
	        "MemoryError %d %d %d",
	        "ValueError: shapes %d and %d%d\n",
	        "Segmentation fault (core dumped) %d%d%d\n",
	        "  File \"t.py\", line %d, in f%d%d\n",
	};
	struct tap_rng rng = {99};
	struct ga_buf b;

	ga_buf_init(&b);
	for (size_t i = 0; i < pieces; i++) {
		size_t k = tap_below(&rng, sizeof(lines) / sizeof(lines[0]));
		int a = (int)tap_below(&rng, 1000);

		if (k > 1 && tap_below(&rng, 4))
			k = tap_below(&rng, 2); /* mostly noise */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		ga_buf_printf(&b, lines[k], a, a / 3, a / 7);
#pragma GCC diagnostic pop
		if (tap_below(&rng, 300) == 0) {
			for (int j = 0; j < 5000; j++)
				ga_buf_putc(&b, (char)('a' + j % 26));
		}
		if (tap_below(&rng, 200) == 0)
			ga_buf_putc(&b, '\0');
	}
	*len = b.len;
	return ga_buf_steal(&b);
}

/* A literal is found in its case only where that cannot lose a match:
 * written in another case than its case-sensitive pattern, or of a
 * pattern with (?i), it is still found in any case. */
static void test_literal_case(void)
{
	static const struct {
		const char *rule, *line;
		bool found;
	} t[] = {
	        {"match = Error: boom\nliteral = error: boom\n",
	         "x Error: boom\n", true},
	        {"match = Error: boom\nliteral = Error: boom\n",
	         "x Error: boom\n", true},
	        {"match = (?i)warp drive\n", "WARP DRIVE failed\n", true},
	        {"match = (?i)warp drive\nliteral = warp drive\n",
	         "Warp Drive failed\n", true},
	        {"match = warp drive\ncaseless = yes\n", "WARP DRIVE\n", true},
	        {"match = Engine stall\n", "Engine stall\n", true},
	        {"match = Engine stall\n", "engine stall\n", false},
	};
	struct ga_status st;

	ga_status_from_int(&st, 1);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char text[512];
		struct ga_rules_source src = {"c.rules", text};
		struct ga_ruleset *rs;
		struct ga_verdict v;

		snprintf(text, sizeof(text),
		         "[rule c]\nclass = io_error\npriority = 1\n%s",
		         t[i].rule);
		rs = ga_rules_load_sources(&src, 1, false, NULL);
		if (!rs) {
			ok(false, "case %zu: rules load", i);
			continue;
		}
		classify(rs, t[i].line, strlen(t[i].line), 0, 0, 0, &st, &v);
		ok((v.cls == GA_CLASS_IO_ERROR) == t[i].found,
		   "literal case %zu: '%.*s' %s", i, (int)strlen(t[i].line) - 1,
		   t[i].line, t[i].found ? "found" : "not found");
		ga_verdict_finish(&v);
		ga_ruleset_destroy(rs);
	}
}

/* srun ends a step when a task fails (--kill-on-bad-exit) and then reports
 * it cancelled and the other tasks killed; a person's scancel prints the
 * cancellation first.  Lines as srun 22.05 prints them. */
static void test_step_ended_by_srun(void)
{
	static const char cancelled[] =
	        "slurmstepd: error: *** STEP 77.0 ON n1 CANCELLED AT "
	        "2024-01-01T00:00:00 ***\n";
	static const char killed[] = "srun: error: n1: tasks 0-2: Killed\n";
	char log[1024];

	snprintf(log, sizeof(log), "%s%s%s%s",
	         "srun: error: n1: task 3: Exited with exit code 1\n",
	         "srun: launch/slurm: _step_signal: Terminating StepId=77.0\n",
	         cancelled, killed);
	expect("a task failed, srun ended the step", log, 1, GA_CLASS_UNKNOWN,
	       "launcher.child-failed", 1);
	snprintf(log, sizeof(log), "%s%s%s%s",
	         "Traceback (most recent call last):\n"
	         "  File \"train.py\", line 9, in <module>\n",
	         "KeyError: 'label'\n"
	         "srun: error: n1: task 3: Exited with exit code 1\n",
	         cancelled, killed);
	expect("the failed task's exception", log, 1, GA_CLASS_CODE_ERROR,
	       "python.exception", 3);
	snprintf(log, sizeof(log), "%s%s%s",
	         "srun: error: n1: task 0: Segmentation fault (core dumped)\n",
	         cancelled, killed);
	expect("a task crashed, srun ended the step", log, -SIGTERM,
	       GA_CLASS_SEGFAULT, "native.crash", 1);
	snprintf(log, sizeof(log), "%s%s%s", cancelled, killed,
	         "srun: error: n1: task 3: Exited with exit code 1\n");
	expect("scancel, then the tasks end", log, -SIGTERM, GA_CLASS_CANCELLED,
	       "slurm.step-cancelled", 1);
	expect("srun: tasks ended by the oom-kill",
	       "srun: error: n1: tasks 0-3: Out Of Memory\n", 1,
	       GA_CLASS_HOST_OOM, "slurm.oom-kill", 1);
	/* One line of each (same line): not an echo. */
	expect("killed task alone", killed, 1, GA_CLASS_HOST_OOM,
	       "srun.task-killed", 1);
}

static void test_streaming(void)
{
	size_t len;
	char *log = mixed_log(4000, &len);
	struct ga_rules_source src = {
	        "u.rules",
	        /* no literal: every segment goes through PCRE2 */
	        "[rule u]\nclass = io_error\npriority = 1\nmatch = ^zq\\d$\n"};
	struct ga_ruleset *unfiltered;
	struct ga_verdict v1, v2;
	struct ga_status st;
	char *d1, *d2;

	expect_same("mixed log, byte by byte and small chunks", builtin, log,
	            len, 50, 15);
	expect_same("mixed log, large chunks", builtin, log, len, 70000, 30);

	/* The same verdict when every segment is matched (no prefilter). */
	unfiltered = ga_rules_load_sources(&src, 1, true, NULL);
	ok(unfiltered != NULL, "ruleset with an unfiltered rule");
	if (unfiltered) {
		const uint32_t *u;

		is_int(ga_ruleset_unfiltered(unfiltered, &u), 1,
		       "... one unfiltered rule");
		expect_same("mixed log, unfiltered", unfiltered, log, len, 300,
		            10);
		ga_status_from_int(&st, 1);
		for (size_t cut = 0; cut < 4; cut++) {
			size_t n = len / 4 * (cut + 1);

			classify(builtin, log, n, 0, 0, 0, &st, &v1);
			classify(unfiltered, log, n, 0, 0, 0, &st, &v2);
			d1 = describe(&v1);
			d2 = describe(&v2);
			is_str(d2, d1,
			       "prefix %zu/4: prefilter and full scan "
			       "agree",
			       cut + 1);
			free(d1);
			free(d2);
			ga_verdict_finish(&v1);
			ga_verdict_finish(&v2);
		}
	}
	ga_ruleset_destroy(unfiltered);
	free(log);

	/* A literal split at every possible chunk boundary. */
	{
		static const char text[] =
		        "ok\r\n\xe2\x82\xac [rank1]: "
		        "torch.OutOfMemoryError: CUDA out of memory\r\nend";
		struct ga_verdict whole;
		char *dw;
		bool same = true;

		classify(builtin, text, sizeof(text) - 1, 0, 0, 0, &st, &whole);
		dw = describe(&whole);
		ok(whole.cls == GA_CLASS_CUDA_OOM, "split literal: cuda_oom");
		for (size_t cut = 1; cut < sizeof(text) - 1 && same; cut++) {
			struct ga_classifier *c = ga_classifier_create(builtin);
			char *d;

			ga_classifier_feed(c, text, cut);
			ga_classifier_feed(c, text + cut,
			                   sizeof(text) - 1 - cut);
			ga_verdict_init(&v1);
			ga_classifier_finish(c, &st, &v1);
			d = describe(&v1);
			same = !strcmp(d, dw);
			if (!same)
				diag("differs when cut at %zu", cut);
			free(d);
			ga_verdict_finish(&v1);
			ga_classifier_destroy(c);
		}
		ok(same, "split literal: same verdict for every cut");
		free(dw);
		ga_verdict_finish(&whole);
	}
}

/* The text of V's evidence, one line each ("LINE: TEXT"; line 0 for a
 * fact). */
static char *evidence_text(const struct ga_verdict *v)
{
	struct ga_buf b;

	ga_buf_init(&b);
	for (size_t i = 0; i < v->n_evidence; i++)
		ga_buf_printf(&b, "%llu: %s\n",
		              (unsigned long long)v->evidence[i].line,
		              v->evidence[i].text);
	return ga_buf_steal(&b);
}

/* Real-world launcher reports, wrapped causes and completion lines:
 * echoes do not outrank the cause, and the evidence tells the fix. */
static void test_echoes_and_context(void)
{
	static const char keyerror[] =
	        "step 1\n"
	        "Traceback (most recent call last):\n"
	        "  File \"train.py\", line 42, in <module>\n"
	        "    main()\n"
	        "  File \"/src/model.py\", line 7, in forward\n"
	        "    return self.table[key]\n"
	        "KeyError: 'lr'\n";
	static const char table[] =
	        "torch.distributed.elastic.multiprocessing.errors."
	        "ChildFailedError:\n"
	        "Root Cause (first observed failure):\n"
	        "[0]:\n"
	        "  rank      : 1 (local_rank: 1)\n"
	        "  exitcode  : -11 (pid: 6421)\n"
	        "  error_file: <N/A>\n";
	struct ga_status st;
	struct ga_verdict v;
	char *ev;

	/* The innermost frame goes with the exception line. */
	ga_status_from_int(&st, 1);
	classify(builtin, keyerror, strlen(keyerror), 0, 0, 0, &st, &v);
	ev = evidence_text(&v);
	is_str(ga_class_name(v.cls), "code_error", "KeyError: code_error");
	ok(ev &&
	           strstr(ev,
	                  "5:   File \"/src/model.py\", line 7, in forward\n") &&
	           strstr(ev, "7: KeyError: 'lr'\n") && !strstr(ev, "train.py"),
	   "KeyError: evidence holds the innermost frame and the exception");
	free(ev);
	ga_verdict_finish(&v);

	expect_same("frame context", builtin, keyerror, strlen(keyerror), 16,
	            4);
	expect_same("launcher table", builtin, table, strlen(table), 16, 4);

	/* The same through the state the capture helper sends. */
	{
		struct ga_classifier *a = ga_classifier_create(builtin);
		struct ga_classifier *b = ga_classifier_create(builtin);
		struct ga_buf state;
		const char *err = NULL;

		ga_buf_init(&state);
		ga_classifier_feed(a, keyerror, strlen(keyerror));
		ga_classifier_write_state(a, &state);
		is_int(ga_classifier_read_state(b, state.data, state.len, &err),
		       0, "state with a frame reads back");
		ga_verdict_init(&v);
		ga_classifier_finish(b, &st, &v);
		ev = evidence_text(&v);
		ok(ev && strstr(ev, "5:   File \"/src/model.py\""),
		   "the frame survives the state transport");
		free(ev);
		ga_verdict_finish(&v);
		ga_buf_finish(&state);
		ga_classifier_destroy(a);
		ga_classifier_destroy(b);
	}

	/* torchrun's table: the decoded child status, with the rank. */
	ga_status_from_int(&st, 1);
	classify(builtin, table, strlen(table), 0, 0, 0, &st, &v);
	ev = evidence_text(&v);
	is_str(ga_class_name(v.cls), "segfault", "exitcode -11: segfault");
	ok(ev && strstr(ev, "0: launcher: rank 1 was killed by SIGSEGV\n"),
	   "exitcode -11: evidence says rank 1 was killed by SIGSEGV");
	if (ev && !strstr(ev, "rank 1 was killed"))
		diag("evidence:\n%s", ev);
	free(ev);
	ga_verdict_finish(&v);

	/* Other tools' reports of a child's status decode the same way. */
	{
		static const struct {
			const char *log, *fact;
		} decoded[] = {
		        {"\t(0) Abnormal termination (signal 11)\n",
		         "was killed by SIGSEGV"},
		        {"<Process name='P-1' pid=5 parent=1 stopped "
		         "exitcode=-SIGKILL>\n",
		         "was killed by SIGKILL"},
		        {"Exited with signal termination: 11.\n",
		         "was killed by SIGSEGV"},
		        {"error: process didn't exit successfully: `t` "
		         "(signal: 9, SIGKILL: kill)\n",
		         "was killed by SIGKILL"},
		        {"Process finished with exit code -1073741795 "
		         "(0xC000001D)\n",
		         "Windows status 0xC000001D (illegal instruction)"},
		        {"Process 1 exit with status code 137.\n",
		         "was killed by SIGKILL"},
		        {"\t(1) Normal termination (return value 2)\n",
		         "exited with code 2"},
		};

		ga_status_init(&st);
		for (size_t i = 0; i < sizeof(decoded) / sizeof(*decoded);
		     i++) {
			classify(builtin, decoded[i].log,
			         strlen(decoded[i].log), 0, 0, 0, &st, &v);
			ev = evidence_text(&v);
			if (!ok(ev && strstr(ev, decoded[i].fact),
			        "decoded: %s", decoded[i].fact))
				diag("evidence:\n%s", ev ? ev : "(none)");
			free(ev);
			ga_verdict_finish(&v);
		}
	}

	expect("launcher -9",
	       "[INFO] [launch.py:319:sigkill_handler] "
	       "Killing subprocess 11\n[ERROR] [launch.py:325:sigkill_handler] "
	       "['python', 'train.py'] exits with return code = -9\n",
	       UNKNOWN_STATUS, GA_CLASS_UNKNOWN, "launcher.child-failed", 2);
	expect("launcher exit 1 only",
	       "subprocess.CalledProcessError: Command '['python', 'x.py']' "
	       "returned non-zero exit status 1.\n",
	       1, GA_CLASS_UNKNOWN, "launcher.child-failed", 1);
	expect("the child's own exception wins over the launcher",
	       "ValueError: bad shape\n"
	       "subprocess.CalledProcessError: Command '['python', 'x.py']' "
	       "returned non-zero exit status 1.\n",
	       1, GA_CLASS_CODE_ERROR, "python.exception", 1);
	expect("Windows access violation",
	       "subprocess.CalledProcessError: Command '['python.exe', "
	       "'x.py']' returned non-zero exit status 3221225477.\n",
	       UNKNOWN_STATUS, GA_CLASS_SEGFAULT, "launcher.child-crash", 1);
	/* Ray's and vLLM's process prefixes are stripped like a rank's. */
	expect("Ray worker prefix",
	       "(RayTrainWorker pid=1234, ip=10.0.0.1) KeyError: 'x'\n", 1,
	       GA_CLASS_CODE_ERROR, "python.exception", 1);
	expect("vLLM engine prefix",
	       "(EngineCore_DP0 pid=1394) KeyError: 'w'\n"
	       "(APIServer pid=1) RuntimeError: Engine core initialization "
	       "failed. See root cause above. Failed core proc(s): {}\n",
	       1, GA_CLASS_CODE_ERROR, "python.exception", 1);
	expect("vLLM's logger prefix",
	       "(VllmWorker rank=0 pid=12) ERROR 05-29 08:36:42 [core.py:390] "
	       "ValueError: size must have one of the following set of keys\n",
	       1, GA_CLASS_CODE_ERROR, "python.exception", 1);
	expect("vLLM's logger prefix before 0.8",
	       "ERROR 04-01 20:31:07 engine.py:366] KeyError: 'w'\n", 1,
	       GA_CLASS_CODE_ERROR, "python.exception", 1);
	expect("a level and a stamp without a source line are text",
	       "ERROR 04-01 20:31:07 KeyError: 'w'\n", 1, GA_CLASS_UNKNOWN,
	       "(none)", 0);
	/* Job tools' state lines describe a job, not necessarily this one:
	 * they count only when this job did not exit 0. */
	expect("sacct rows in a job that exited 0",
	       "       11   old-run   gpu   acct   8  CANCELLED+      0:0\n"
	       "       12   old-run   gpu   acct   8  OUT_OF_ME+    0:125\n",
	       0, GA_CLASS_SUCCESS, "(none)", 0);
	expect("sacct rows, status unknown",
	       "       11   old-run   gpu   acct   8  CANCELLED+      0:0\n"
	       "       12   old-run   gpu   acct   8  OUT_OF_ME+    0:125\n",
	       UNKNOWN_STATUS, GA_CLASS_HOST_OOM, "slurm.state-line.oom", 2);
	expect("a log pasted as an indented block",
	       "    Traceback (most recent call last):\n"
	       "      File \"t.py\", line 1, in <module>\n"
	       "    KeyError: 'x'\n",
	       1, GA_CLASS_CODE_ERROR, "python.exception", 3);
	expect("a tab before a rank prefix", "\t[rank1]: KeyError: 'x'\n", 1,
	       GA_CLASS_CODE_ERROR, "python.exception", 1);
	expect("a Markdown quote", "> > KeyError: 'x'\n", 1,
	       GA_CLASS_CODE_ERROR, "python.exception", 1);
	expect("kubectl logs --timestamps",
	       "2024-01-01T12:00:00.123456789Z [rank1]: KeyError: 'x'\n", 1,
	       GA_CLASS_CODE_ERROR, "python.exception", 1);
	expect("TaskCluster's live log prefix",
	       "[task 2024-12-17T16:38:34.130Z] KeyError: 'x'\n", 1,
	       GA_CLASS_CODE_ERROR, "python.exception", 1);
	expect("a bracketed word without a stamp is text",
	       "[task 2024-12-17] KeyError: 'x'\n", 1, GA_CLASS_UNKNOWN,
	       "(none)", 0);
	expect("a date that is no RFC 3339 stamp",
	       "2024-01-01 12:00:00 KeyError: 'x'\n", 1, GA_CLASS_UNKNOWN,
	       "(none)", 0);
	expect("Open MPI --tag-output prefix", "[1,3]<stderr>:Killed\n",
	       UNKNOWN_STATUS, GA_CLASS_HOST_OOM, "shell.killed", 1);
	expect("Lightning's rank prefix", "[rank: 1] KeyError: 'x'\n", 1,
	       GA_CLASS_CODE_ERROR, "python.exception", 1);
	expect("a bracket that is no tag", "[1,3]<stderr> Killed\n",
	       UNKNOWN_STATUS, GA_CLASS_UNKNOWN, "(none)", 0);
	expect("Docker Compose prefix", "trainer-1  | Killed\n", UNKNOWN_STATUS,
	       GA_CLASS_HOST_OOM, "shell.killed", 1);
	expect("a column of text is no Compose prefix", "rank 0 | Killed\n",
	       UNKNOWN_STATUS, GA_CLASS_UNKNOWN, "(none)", 0);
	expect("TorchX replica prefix before torchrun's tee",
	       "dlrm_main/0 [3]:ValueError: too many values to unpack\n", 1,
	       GA_CLASS_CODE_ERROR, "python.exception", 1);
	expect("TorchX replica prefix alone", "trainer/1 KeyError: 'x'\n", 1,
	       GA_CLASS_CODE_ERROR, "python.exception", 1);
	expect("a file name is no TorchX prefix", "ckpt/3.pt KeyError: 'x'\n",
	       1, GA_CLASS_UNKNOWN, "(none)", 0);
	expect("a parenthesis without a pid is text", "(note) KeyError: 'x'\n",
	       1, GA_CLASS_UNKNOWN, "(none)", 0);
	expect("GNU time: signal 9", "Command terminated by signal 9\n",
	       UNKNOWN_STATUS, GA_CLASS_UNKNOWN, "launcher.child-sigkill", 1);
	/* A SIGKILL is the out-of-memory killer's only with OOM context. */
	expect("launcher -9 after the kernel's OOM report",
	       "Out of memory: Killed process 1234 (python) total-vm:1kB\n"
	       "failed (exitcode: -9) local_rank: 0 (pid: 1234)\n",
	       UNKNOWN_STATUS, GA_CLASS_HOST_OOM, "kernel.oom-killer", 1);
	{
		struct ga_status oom;
		struct ga_verdict ov;
		const char *log = "[ERROR] exits with return code = -9\n";

		ga_status_from_int(&oom, -9);
		oom.oom_kills = 1;
		classify(builtin, log, strlen(log), 0, 0, 0, &oom, &ov);
		is_str(ga_class_name(ov.cls), "host_oom",
		       "launcher -9 and the memory cgroup's oom-kill count");
		ga_verdict_finish(&ov);
	}
	expect("a worker's SIGBUS: shared memory",
	       "  exitcode  : -7 (pid: 3112)\n"
	       "  traceback : Signal 7 (SIGBUS) received by PID 3112\n",
	       UNKNOWN_STATUS, GA_CLASS_HOST_OOM, "launcher.child-sigbus", 2);

	/* Slurm's own lines. */
	expect("step cancelled due to task failure",
	       "slurmstepd: error: *** STEP 5.0 ON n1 CANCELLED AT "
	       "2026-01-01T00:00:00 DUE TO TASK FAILURE ***\n"
	       "srun: error: n1: tasks 0-3: Terminated\n",
	       UNKNOWN_STATUS, GA_CLASS_UNKNOWN, "launcher.child-failed", 1);
	expect("step cancelled after an oom-kill",
	       "slurmstepd: error: Detected 1 oom-kill event(s) in "
	       "StepId=5.0. Some of your processes may have been killed by "
	       "the cgroup out-of-memory handler.\n"
	       "slurmstepd: error: *** STEP 5.0 ON n1 CANCELLED AT "
	       "2026-01-01T00:00:00 ***\n",
	       UNKNOWN_STATUS, GA_CLASS_HOST_OOM, "slurm.oom-kill", 1);
	expect("a cancelled step alone",
	       "slurmstepd: error: *** STEP 5.0 ON "
	       "n1 CANCELLED AT 2026-01-01T00:00:00 ***\n",
	       UNKNOWN_STATUS, GA_CLASS_CANCELLED, "slurm.step-cancelled", 1);
	/* slurmstepd reports a batch step's oom-kills when the step ends,
	 * after the job's cancellation: the kills came first. */
	expect("a job cancelled, then its oom-kills reported",
	       "slurmstepd: error: *** JOB 21392618 ON n2 CANCELLED AT "
	       "2023-04-17T11:26:50 ***\n"
	       "slurmstepd: error: Detected 1 oom-kill event(s) in "
	       "StepId=21392618.batch. Some of your processes may have been "
	       "killed by the cgroup out-of-memory handler.\n",
	       UNKNOWN_STATUS, GA_CLASS_HOST_OOM, "slurm.oom-kill", 2);
	expect("a job cancelled without oom-kills",
	       "slurmstepd: error: *** JOB 21392618 ON n2 CANCELLED AT "
	       "2023-04-17T11:26:50 ***\n",
	       UNKNOWN_STATUS, GA_CLASS_CANCELLED, "slurm.cancelled", 1);
	expect("preempted by the job's own handler",
	       "submitit WARNING (2021-04-01 02:26:27,643) - Caught signal "
	       "SIGUSR1 on n1: this job is preempted.\n",
	       0, GA_CLASS_CANCELLED, "submitit.preempted", 1);

	/* Wrapped causes. */
	expect("NCCL's CUDA calloc",
	       "n1:1:2 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out "
	       "of memory'\ntorch.distributed.DistBackendError: NCCL error "
	       "in: ProcessGroupNCCL.cpp:1296, internal error\n",
	       1, GA_CLASS_CUDA_OOM, "cuda.oom.wrapped", 1);
	expect("NCCL's shared memory",
	       "n1:1:2 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate "
	       "failed : No space left on device\n",
	       1, GA_CLASS_HOST_OOM, "host.shm-full", 1);
	expect("loss scale collapse",
	       "Gradient overflow. Skipping step, loss scaler 0 reducing loss "
	       "scale to 5.1e-203\n",
	       UNKNOWN_STATUS, GA_CLASS_NAN, "nan.loss-scale", 1);

	expect("DeepSpeed loss scale at 1",
	       "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss "
	       "scale: 2, reducing to 1\n",
	       UNKNOWN_STATUS, GA_CLASS_NAN, "nan.loss-scale", 1);
	expect("DeepSpeed loss scale still high: no verdict",
	       "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss "
	       "scale: 65536, reducing to 32768\n",
	       1, GA_CLASS_UNKNOWN, "(none)", 0);
	expect("vLLM KV cache",
	       "ValueError: No available memory for the "
	       "cache blocks. Try increasing `gpu_memory_utilization`\n",
	       1, GA_CLASS_CUDA_OOM, "cuda.oom.kv-cache", 1);

	/* Completion without a status. */
	expect("trainer completion, no status",
	       "{'loss': 0.5}\n***** train metrics *****\n", UNKNOWN_STATUS,
	       GA_CLASS_SUCCESS, "done.trainer", 2);
	expect("completion line, but the job failed",
	       "***** train metrics *****\n", 1, GA_CLASS_UNKNOWN, "(none)", 0);
}

/* Python's "Exception ignored in: ..." announces a traceback whose
 * exception it swallowed: that exception line is no failure, but the next
 * one is, and so is one too far below the announcement to be its. */
static void test_ignored_exceptions(void)
{
	static const char swallowed[] =
	        "Exception ignored in: <finalize object at 0x7f7d; dead>\n"
	        "Traceback (most recent call last):\n"
	        "  File \"/usr/lib/python3.12/weakref.py\", line 585, in "
	        "__call__\n"
	        "    def __call__(self, _=None):\n"
	        "TimeoutError: Operation timed out!\n"
	        "[rank1]:[E516 06:09:16.296189442 ProcessGroupNCCL.cpp:629] "
	        "[Rank 1] Watchdog caught collective operation timeout: "
	        "WorkNCCL(SeqNum=4, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
	        "Timeout(ms)=1800000) ran for 1800010 milliseconds before timing "
	        "out.\n";
	static const char then_real[] =
	        "Exception ignored in atexit callback: <function _exit at 0x1>\n"
	        "Traceback (most recent call last):\n"
	        "  File \"/lib/x.py\", line 3, in _exit\n"
	        "AttributeError: 'NoneType' object has no attribute 'close'\n"
	        "Traceback (most recent call last):\n"
	        "  File \"train.py\", line 9, in <module>\n"
	        "KeyError: 'lr'\n";
	static const char claimed[] =
	        "Exception ignored in: <function Loader.__del__ at 0x1>\n"
	        "Traceback (most recent call last):\n"
	        "RuntimeError: CUDA error: an illegal memory access was "
	        "encountered\n"
	        "Traceback (most recent call last):\n"
	        "ValueError: bad shape\n";
	static const char done[] =
	        "Exception ignored in: <function tqdm.__del__ at 0x1>\n"
	        "Traceback (most recent call last):\n"
	        "AttributeError: 'tqdm' object has no attribute 'last_print_t'\n"
	        "Training completed. Do not forget to share your model on "
	        "huggingface.co/models =)\n";
	struct ga_buf far;

	expect("swallowed exception before a watchdog timeout", swallowed, 1,
	       GA_CLASS_NCCL, "nccl.watchdog", 6);
	expect("a later exception counts", then_real, 1, GA_CLASS_CODE_ERROR,
	       "python.exception", 7);
	/* The swallowed exception's line is a CUDA fault that counts as one;
	 * the announcement is used up there, not on the ValueError. */
	expect("announcement used up by a claimed line", claimed, 1,
	       GA_CLASS_CUDA_KERNEL, "cuda.kernel-fault", 3);
	expect("swallowed exception, then completion", done, UNKNOWN_STATUS,
	       GA_CLASS_SUCCESS, "done.trainer", 4);
	expect_same("swallowed exception", builtin, swallowed,
	            strlen(swallowed), 16, 4);

	ga_buf_init(&far);
	ga_buf_puts(&far, "Exception ignored in: <function f at 0x1>\n");
	for (int i = 0; i < 250; i++)
		ga_buf_printf(&far, "step %d\n", i);
	ga_buf_puts(&far, "ValueError: bad shape\n");
	expect("an exception far below the announcement counts",
	       far.data ? far.data : "", 1, GA_CLASS_CODE_ERROR,
	       "python.exception", 252);
	ga_buf_finish(&far);
}

int main(void)
{
	ga_log_set_sink(quiet, NULL);
	builtin = ga_rules_load(NULL, NULL, NULL);
	if (!builtin)
		tap_skip_all("built-in rules do not load");
	test_ordering();
	test_fallback_and_fatal();
	test_quirks();
	test_tail();
	test_streaming();
	test_literal_case();
	test_echoes_and_context();
	test_ignored_exceptions();
	test_step_ended_by_srun();
	ga_ruleset_destroy(builtin);
	return tap_done();
}
