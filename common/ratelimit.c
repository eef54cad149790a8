/* SPDX-License-Identifier: MIT */
#include "ratelimit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 3600

uint64_t ga_backoff_delay(unsigned base, unsigned attempts, uint64_t cap)
{
	uint64_t d = base ? base : 1;

	for (unsigned i = 1; i < attempts; i++) {
		if (d >= cap)
			return cap;
		d *= 2;
	}
	return d > cap ? cap : d;
}

struct sent {
	int64_t t;
	char user[64];
};

struct ga_rate {
	unsigned per_user, global;
	struct sent *v; /* oldest first */
	size_t n, cap;
};

struct ga_rate *ga_rate_create(unsigned per_user, unsigned global)
{
	struct ga_rate *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->per_user = per_user;
	r->global = global;
	return r;
}

void ga_rate_destroy(struct ga_rate *r)
{
	if (!r)
		return;
	free(r->v);
	free(r);
}

static void expire(struct ga_rate *r, int64_t now)
{
	size_t k = 0;

	while (k < r->n && r->v[k].t <= now - WINDOW)
		k++;
	if (k) {
		memmove(r->v, r->v + k, (r->n - k) * sizeof(*r->v));
		r->n -= k;
	}
}

int64_t ga_rate_wait(const struct ga_rate *r, const char *user, int64_t now)
{
	int64_t wait = 0;
	size_t first = 0, count = 0, n_user = 0;

	/* Entries still inside the window ending at NOW. */
	while (first < r->n && r->v[first].t <= now - WINDOW)
		first++;
	count = r->n - first;
	if (r->global && count >= r->global) {
		/* One slot frees when the (count - global + 1)-th oldest
		 * send leaves the window. */
		int64_t t = r->v[first + count - r->global].t + WINDOW - now;

		if (t > wait)
			wait = t;
	}
	if (r->per_user && user) {
		size_t need;

		for (size_t i = first; i < r->n; i++)
			if (!strncmp(r->v[i].user, user,
			             sizeof(r->v[i].user) - 1))
				n_user++;
		if (n_user >= r->per_user) {
			need = n_user - r->per_user + 1;
			for (size_t i = first; i < r->n; i++) {
				if (strncmp(r->v[i].user, user,
				            sizeof(r->v[i].user) - 1))
					continue;
				if (--need == 0) {
					int64_t t = r->v[i].t + WINDOW - now;

					if (t > wait)
						wait = t;
					break;
				}
			}
		}
	}
	return wait;
}

int ga_rate_record(struct ga_rate *r, const char *user, int64_t now)
{
	expire(r, now);
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct sent *tmp = realloc(r->v, cap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		r->v = tmp;
		r->cap = cap;
	}
	r->v[r->n].t = now;
	snprintf(r->v[r->n].user, sizeof(r->v[r->n].user), "%s",
	         user ? user : "-");
	r->n++;
	return 0;
}

int ga_rate_load_log(struct ga_rate *r, const char *path, int64_t now)
{
	char line[1024], user[64], claim[256], mid[300];
	long long t;
	FILE *f = fopen(path, "re");

	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lld %63s %255s %299s", &t, user, claim,
		           mid) != 4)
			continue;
		/* Reports with nothing to send are recorded too (for dedup),
		 * with a "(...)" note in place of a Message-ID ("(log-only)",
		 * "(success, fail-only)"): only deliveries count. */
		if (mid[0] == '(')
			continue;
		if (t > now - WINDOW && t <= now &&
		    ga_rate_record(r, user, t)) {
			fclose(f);
			return -ENOMEM;
		}
	}
	fclose(f);
	return 0;
}
