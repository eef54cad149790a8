/* SPDX-License-Identifier: MIT */
#include "smtp.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

int ga_smtp_read_credentials(const char *path, char *user, size_t user_size,
                             char *pass, size_t pass_size)
{
	char line[1024];
	struct stat st;
	ssize_t n;
	char *colon, *nl;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	/* Like ssh with its keys: a secret others can read is no secret,
	 * and refusing is the only way an admin notices. */
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077) ||
	    (st.st_uid != 0 && st.st_uid != geteuid())) {
		rc = -EPERM;
		goto out;
	}
	n = read(fd, line, sizeof(line) - 1);
	if (n < 0) {
		rc = -errno;
		goto out;
	}
	line[n] = '\0';
	nl = strpbrk(line, "\r\n");
	if (nl)
		*nl = '\0';
	colon = strchr(line, ':');
	if (!colon || (size_t)(colon - line) >= user_size ||
	    strlen(colon + 1) >= pass_size) {
		rc = -EINVAL;
		goto out;
	}
	*colon = '\0';
	strcpy(user, line);
	strcpy(pass, colon + 1);
out:
	explicit_bzero(line, sizeof(line));
	close(fd);
	return rc;
}

enum ga_send_result ga_smtp_classify(int curl_code, long reply)
{
	if (curl_code == CURLE_OK)
		return reply >= 500   ? GA_SEND_FAIL
		       : reply >= 400 ? GA_SEND_RETRY
		                      : GA_SEND_OK;
	/* RFC 5321 section 4.2.1: 4yz is a transient negative completion
	 * (try again), 5yz a permanent one (do not repeat as is). */
	if (reply >= 500 && reply < 600)
		return GA_SEND_FAIL;
	/* Everything else -- no connection, a timeout, TLS required but
	 * not offered, a login refused, a 4xx -- may get better without
	 * changing the message: keep it and retry.  Misconfiguration shows
	 * in the log and in the entry's state. */
	return GA_SEND_RETRY;
}

struct reader {
	const char *p;
	size_t left;
};

static size_t read_cb(char *buf, size_t size, size_t nmemb, void *ud)
{
	struct reader *r = ud;
	size_t n = size * nmemb;

	if (n > r->left)
		n = r->left;
	memcpy(buf, r->p, n);
	r->p += n;
	r->left -= n;
	return n;
}

/* The server's last reply line, for the log and the dead letter's reason:
 * libcurl reports only the code, the text says why ("5.1.1 mailbox
 * unavailable").  Replies reach the debug callback as CURLINFO_HEADER_IN. */
struct last_reply {
	char line[200];
};

static int debug_cb(CURL *c, curl_infotype type, char *data, size_t size,
                    void *ud)
{
	struct last_reply *lr = ud;
	size_t n = 0;

	if (type != CURLINFO_HEADER_IN || size < 3 || data[0] < '2' ||
	    data[0] > '5')
		return 0;
	while (n < size && n < sizeof(lr->line) - 1 && data[n] != '\r' &&
	       data[n] != '\n') {
		/* Server text goes into our logs: printable ASCII only. */
		lr->line[n] = data[n] >= 0x20 && data[n] < 0x7f ? data[n] : '?';
		n++;
	}
	lr->line[n] = '\0';
	return 0;
}

enum ga_send_result ga_smtp_send(const struct ga_config *cfg,
                                 const char *const *rcpt, size_t n,
                                 const char *msg, size_t len, char *err,
                                 size_t err_size)
{
	char errbuf[CURL_ERROR_SIZE] = "", user[256], pass[512];
	char from[300];
	struct curl_slist *list = NULL, *tmp;
	struct reader rd = {msg, len};
	struct last_reply lr = {""};
	enum ga_send_result res = GA_SEND_RETRY;
	long reply = 0;
	CURLcode cc;
	CURL *c;
	bool implicit = !strncmp(cfg->smtp_url, "smtps://", 8);

	err[0] = '\0';
	if ((cfg->tls == GA_TLS_IMPLICIT) != implicit) {
		snprintf(err, err_size, "tls = %s needs an %s URL, got %s",
		         implicit ? "starttls/try/none" : "implicit",
		         implicit ? "smtp://" : "smtps://", cfg->smtp_url);
		return GA_SEND_RETRY;
	}
	c = curl_easy_init();
	if (!c) {
		snprintf(err, err_size, "cannot create a libcurl handle");
		return GA_SEND_RETRY;
	}
	for (size_t i = 0; i < n; i++) {
		tmp = curl_slist_append(list, rcpt[i]);
		if (!tmp) {
			snprintf(err, err_size, "out of memory");
			goto out;
		}
		list = tmp;
	}
	/* RFC 5321 section 4.1.2: the reverse-path in angle brackets. */
	snprintf(from, sizeof(from), "<%s>", cfg->mail_from);
	curl_easy_setopt(c, CURLOPT_URL, cfg->smtp_url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT,
	                 (long)cfg->connect_timeout_s);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)cfg->timeout_s);
	curl_easy_setopt(c, CURLOPT_DEBUGFUNCTION, debug_cb);
	curl_easy_setopt(c, CURLOPT_DEBUGDATA, &lr);
	curl_easy_setopt(c, CURLOPT_VERBOSE, 1L);
	curl_easy_setopt(c, CURLOPT_MAIL_FROM, from);
	curl_easy_setopt(c, CURLOPT_MAIL_RCPT, list);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, read_cb);
	curl_easy_setopt(c, CURLOPT_READDATA, &rd);
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
	switch (cfg->tls) {
	case GA_TLS_NONE:
		curl_easy_setopt(c, CURLOPT_USE_SSL, (long)CURLUSESSL_NONE);
		break;
	case GA_TLS_TRY:
		/* Only because the admin wrote tls = try. */
		curl_easy_setopt(c, CURLOPT_USE_SSL, (long)CURLUSESSL_TRY);
		break;
	case GA_TLS_STARTTLS:
	case GA_TLS_IMPLICIT:
		curl_easy_setopt(c, CURLOPT_USE_SSL, (long)CURLUSESSL_ALL);
		break;
	}
	/* A site CA for an internal relay; the certificate and host name
	 * are always verified (libcurl's defaults, never switched off). */
	if (cfg->ca_file && *cfg->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, cfg->ca_file);
	if (cfg->credentials_file && *cfg->credentials_file) {
		int rc = ga_smtp_read_credentials(cfg->credentials_file, user,
		                                  sizeof(user), pass,
		                                  sizeof(pass));

		if (rc) {
			snprintf(
			        err, err_size, "credentials file %s: %s",
			        cfg->credentials_file,
			        rc == -EPERM
			                ? "refused: must be a regular file of root or the "
			                  "service user, mode 0600 or 0400"
			        : rc == -EINVAL
			                ? "expected one line user:password"
			                : strerror(-rc));
			goto out;
		}
		curl_easy_setopt(c, CURLOPT_USERNAME, user);
		curl_easy_setopt(c, CURLOPT_PASSWORD, pass);
		explicit_bzero(pass, sizeof(pass));
	}
	cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &reply);
	res = ga_smtp_classify(cc, reply);
	if (res != GA_SEND_OK)
		snprintf(err, err_size, "%s: %s%s%s", cfg->smtp_url,
		         errbuf[0] ? errbuf : curl_easy_strerror(cc),
		         reply >= 400 ? "; server said: " : "",
		         reply >= 400 ? lr.line : "");
out:
	/* smtp-mail.c: the recipient list outlives perform, freed here. */
	curl_slist_free_all(list);
	curl_easy_cleanup(c);
	return res;
}
