/* SPDX-License-Identifier: MIT */
/* Backoff arithmetic and the sliding-window rate limiter. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ga-config.h"
#include "ratelimit.h"
#include "tap.h"
#ifdef GA_HAVE_CURL
#include <curl/curl.h>

#include "smtp.h"
#include "webhook.h"
#endif

int main(void)
{
	struct ga_rate *r;

	ok(ga_backoff_delay(60, 1, 21600) == 60, "first retry after base");
	ok(ga_backoff_delay(60, 2, 21600) == 120, "doubles");
	ok(ga_backoff_delay(60, 5, 21600) == 960, "60*2^4");
	ok(ga_backoff_delay(60, 9, 21600) == 15360, "60*2^8");
	ok(ga_backoff_delay(60, 10, 21600) == 21600, "capped");
	ok(ga_backoff_delay(60, 4000000000u, 21600) == 21600, "no overflow");
	ok(ga_backoff_delay(0, 1, 100) == 1, "zero base treated as 1");

	r = ga_rate_create(2, 3);
	ok(r != NULL, "create");
	ok(ga_rate_wait(r, "alice", 1000) == 0, "empty window: send now");
	ok(ga_rate_record(r, "alice", 1000) == 0, "record alice at %lld",
	   (long long)1000);
	ok(ga_rate_wait(r, "alice", 1001) == 0, "1 of 2 for alice");
	ok(ga_rate_record(r, "alice", 1010) == 0, "record alice at %lld",
	   (long long)1010);
	ok(ga_rate_wait(r, "alice", 1020) == 1000 + 3600 - 1020,
	   "alice at 2/2 waits for the oldest to leave the window");
	ok(ga_rate_wait(r, "bob", 1020) == 0, "bob unaffected");
	ok(ga_rate_record(r, "bob", 1030) == 0, "record bob at %lld",
	   (long long)1030);
	ok(ga_rate_wait(r, "carol", 1040) == 1000 + 3600 - 1040,
	   "global 3/3: carol waits too");
	ok(ga_rate_wait(r, "alice", 4600) == 0 ||
	           ga_rate_wait(r, "alice", 4601) == 0,
	   "window slides");
	ok(ga_rate_wait(r, "carol", 4601) == 0, "global slot freed after 1 h");
	ga_rate_destroy(r);

	/* 1000 array tasks in one digest count once; 1000 separate jobs of
	 * one user are spread: at most 2 per hour here. */
	r = ga_rate_create(2, 0);
	{
		int64_t t = 0;
		unsigned sent = 0;

		for (int i = 0; i < 1000 && t < 3 * 3600; i++) {
			int64_t w = ga_rate_wait(r, "u", t);

			t += w;
			if (ga_rate_record(r, "u", t))
				break; /* the count below then fails */
			sent++;
		}
		ok(sent == 6 || sent == 7,
		   "2/h: %u sends in 3 h, deferred not "
		   "dropped",
		   sent);
	}
	ga_rate_destroy(r);

	/* Only real deliveries count: log-only lines of sent.log do not. */
	{
		char path[] = "/tmp/ga-rate-log.XXXXXX";
		int fd = mkstemp(path);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

		if (f) {
			for (int i = 0; i < 50; i++)
				fprintf(f, "%d alice %d.u1.0 (log-only)\n",
				        100000 + i, i);
			fprintf(f,
			        "100050 alice 98.u1.0 (success, fail-only)\n");
			fprintf(f, "100100 alice 99.u1.0 <m@x>\n");
			fclose(f);
		}
		r = ga_rate_create(2, 500);
		ok(r && ga_rate_load_log(r, path, 100200) == 0 &&
		           ga_rate_wait(r, "alice", 100200) == 0,
		   "50 log-only, 1 fail-only success and 1 mail: alice may send");
		ok(ga_rate_record(r, "alice", 100200) == 0,
		   "record alice at %lld", (long long)100200);
		ok(ga_rate_wait(r, "alice", 100201) > 0,
		   "a second mail reaches her limit of 2");
		ga_rate_destroy(r);
		unlink(path);
	}

#ifdef GA_HAVE_CURL
	ok(ga_smtp_classify(CURLE_OK, 250) == GA_SEND_OK, "250 ok");
	ok(ga_smtp_classify(CURLE_SEND_ERROR, 451) == GA_SEND_RETRY,
	   "451 retry");
	ok(ga_smtp_classify(CURLE_SEND_ERROR, 550) == GA_SEND_FAIL, "550 dead");
	ok(ga_smtp_classify(CURLE_COULDNT_CONNECT, 0) == GA_SEND_RETRY,
	   "no connection: retry");
	ok(ga_smtp_classify(CURLE_OPERATION_TIMEDOUT, 0) == GA_SEND_RETRY,
	   "timeout: retry");
	ok(ga_smtp_classify(CURLE_USE_SSL_FAILED, 250) == GA_SEND_RETRY,
	   "STARTTLS refused: kept");
	ok(ga_webhook_classify(CURLE_OK, 204) == GA_SEND_OK, "webhook 204");
	ok(ga_webhook_classify(CURLE_OK, 429) == GA_SEND_RETRY, "webhook 429");
	ok(ga_webhook_classify(CURLE_OK, 503) == GA_SEND_RETRY, "webhook 503");
	ok(ga_webhook_classify(CURLE_OK, 404) == GA_SEND_FAIL, "webhook 404");
#endif
	return tap_done();
}
