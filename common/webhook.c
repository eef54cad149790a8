/* SPDX-License-Identifier: MIT */
#include "webhook.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

enum ga_send_result ga_webhook_classify(int curl_code, long status)
{
	if (curl_code != CURLE_OK)
		return GA_SEND_RETRY;
	if (status >= 200 && status < 300)
		return GA_SEND_OK;
	/* RFC 9110 section 15.5.9 and RFC 6585 section 4: 408 and 429 are
	 * "try later"; other 4xx mean this request will never work. */
	if (status == 408 || status == 429 || status >= 500)
		return GA_SEND_RETRY;
	return GA_SEND_FAIL;
}

static size_t discard(char *p, size_t size, size_t nmemb, void *ud)
{
	return size * nmemb;
}

enum ga_send_result ga_webhook_post(const struct ga_config *cfg,
                                    const char *url, const char *content_type,
                                    const char *title, const char *body,
                                    size_t len, char *err, size_t err_size)
{
	char ct[128], th[300];
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdr = NULL;
	enum ga_send_result res;
	long status = 0;
	CURLcode cc;
	CURL *c;

	err[0] = '\0';
	if (!url)
		url = cfg->webhook_url;
	if (!url || !*url) {
		snprintf(err, err_size, "no [webhook] url configured");
		return GA_SEND_RETRY;
	}
	c = curl_easy_init();
	snprintf(ct, sizeof(ct), "Content-Type: %s",
	         content_type ? content_type : "application/json");
	hdr = curl_slist_append(NULL, ct);
	if (hdr && title && *title) {
		struct curl_slist *h2;

		snprintf(th, sizeof(th), "Title: %s", title);
		h2 = curl_slist_append(hdr, th);
		if (!h2) {
			curl_slist_free_all(hdr);
			hdr = NULL;
		} else {
			hdr = h2;
		}
	}
	if (!c || !hdr) {
		snprintf(err, err_size, "out of memory");
		curl_slist_free_all(hdr);
		curl_easy_cleanup(c);
		return GA_SEND_RETRY;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT,
	                 (long)cfg->webhook_timeout_s);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)cfg->webhook_timeout_s);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	res = ga_webhook_classify(cc, status);
	if (res != GA_SEND_OK)
		snprintf(err, err_size, "webhook: %s (HTTP %ld)",
		         errbuf[0] ? errbuf : curl_easy_strerror(cc), status);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	return res;
}
