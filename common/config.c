/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "ga-config.h"
#include "buf.h"
#include "ini.h"

#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum kind {
	K_STR,
	K_UINT,
	K_U64,
	K_BOOL,
	K_MODE,
	K_OCTAL,
	K_POLICY,
	K_TLS,
	K_KEEP,
	K_NOTIFY,
	K_FORMAT,
};

struct key {
	const char *section;
	const char *name;
	enum kind kind;
	size_t offset;
	uint64_t min, max; /* for numbers */
};

#define F(field) offsetof(struct ga_config, field)
#define MiB (UINT64_C(1) << 20)

/* Every key, its type and its bounds.  Values outside are rejected: the
 * file is written by an admin but read inside slurmstepd. */
static const struct key keys[] = {
        {"general", "default_mode", K_MODE, F(default_mode), 0, 0},
        {"general", "notify", K_NOTIFY, F(notify), 0, 0},
        {"general", "log_pattern", K_STR, F(log_pattern), 1, PATH_MAX},
        {"general", "log_file_mode", K_OCTAL, F(log_file_mode), 0400, 0666},
        {"general", "rules_dir", K_STR, F(rules_dir), 0, PATH_MAX},
        {"general", "spool_dir", K_STR, F(spool_dir), 1, PATH_MAX},
        {"general", "tail_lines", K_UINT, F(tail_lines), 0, 10000},
        {"general", "helper_max_rss", K_U64, F(helper_max_rss), 8 * MiB,
         4096 * MiB},
        {"general", "drain_timeout_ms", K_UINT, F(drain_timeout_ms), 10, 60000},
        {"general", "query_scheduler", K_BOOL, F(query_scheduler), 0, 1},
        {"capture", "log_max", K_U64, F(log_max), MiB, UINT64_C(1) << 40},
        {"capture", "keep", K_KEEP, F(keep_logs), 0, 0},
        {"capture", "classify_max", K_U64, F(classify_max), MiB,
         UINT64_C(1) << 40},
        {"capture", "classify_timeout_ms", K_UINT, F(classify_timeout_ms), 100,
         600000},
        {"recipients", "policy", K_POLICY, F(recipient_policy), 0, 0},
        {"recipients", "owner_domain", K_STR, F(owner_domain), 0, 253},
        {"recipients", "allowed_domains", K_STR, F(allowed_domains), 0, 16384},
        {"recipients", "max_recipients", K_UINT, F(max_recipients), 1, 100},
        {"spool", "entry_max", K_U64, F(spool_entry_max), 64 * 1024,
         1024 * MiB},
        {"spool", "total_max", K_U64, F(spool_total_max), MiB,
         UINT64_C(1) << 40},
        {"spool", "user_share", K_UINT, F(spool_user_share), 1, 100},
        {"spool", "quiet_period", K_UINT, F(spool_quiet_s), 0, 3600},
        {"mail", "smtp_url", K_STR, F(smtp_url), 0, 1024},
        {"mail", "tls", K_TLS, F(tls), 0, 0},
        {"mail", "from", K_STR, F(mail_from), 0, 254},
        {"mail", "credentials_file", K_STR, F(credentials_file), 0, PATH_MAX},
        {"mail", "ca_file", K_STR, F(ca_file), 0, PATH_MAX},
        {"mail", "connect_timeout", K_UINT, F(connect_timeout_s), 1, 600},
        {"mail", "timeout", K_UINT, F(timeout_s), 1, 3600},
        {"mail", "attach_budget", K_U64, F(attach_budget), 0, 100 * MiB},
        {"mail", "artifact_globs", K_STR, F(artifact_globs), 0, 4096},
        {"mail", "collect_timeout_ms", K_UINT, F(collect_timeout_ms), 100,
         600000},
        {"mail", "max_age", K_UINT, F(max_age_s), 60, 30 * 86400},
        {"mail", "retry_base", K_UINT, F(retry_base_s), 1, 86400},
        {"mail", "rate_per_user_hour", K_UINT, F(rate_per_user_hour), 1,
         100000},
        {"mail", "rate_global_hour", K_UINT, F(rate_global_hour), 1, 1000000},
        {"mail", "from_name", K_STR, F(from_name), 0, 64},
        {"mail", "subject_prefix", K_STR, F(subject_prefix), 0, 32},
        {"mail", "footer", K_STR, F(footer), 0, 180},
        {"mail", "help_url", K_STR, F(help_url), 0, 180},
        {"webhook", "url", K_STR, F(webhook_url), 0, 2048},
        {"webhook", "format", K_FORMAT, F(webhook_format), 0, 16},
        {"webhook", "allowed_hosts", K_STR, F(webhook_allowed_hosts), 0, 4096},
        {"webhook", "timeout", K_UINT, F(webhook_timeout_s), 1, 600},
        /* Kernel evidence and the admin channel. */
        {"general", "kernel_log", K_BOOL, F(kernel_log), 0, 1},
        {"general", "nvidia_gpus_dir", K_STR, F(nvidia_gpus_dir), 1, PATH_MAX},
        {"general", "kernel_log_max_ms", K_UINT, F(kernel_log_max_ms), 1, 5000},
        {"admin", "mail", K_STR, F(admin_mail), 0, 254},
        {"admin", "webhook", K_STR, F(admin_webhook), 0, 2048},
        {"admin", "period", K_UINT, F(admin_period_s), 0, 30 * 86400},
};

static const char *const mode_names[] = {"off", "log", "email", "webhook"};

int ga_mode_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (!strcmp(name, mode_names[i]))
			return (int)i;
	return -1;
}

int ga_notify_from_name(const char *name)
{
	if (!strcmp(name, "always"))
		return GA_NOTIFY_ALWAYS;
	if (!strcmp(name, "fail"))
		return GA_NOTIFY_FAIL;
	return -1;
}

const char *ga_notify_name(enum ga_notify n)
{
	return n == GA_NOTIFY_FAIL ? "fail" : "always";
}

const char *ga_mode_name(enum ga_mode mode)
{
	if ((size_t)mode >= sizeof(mode_names) / sizeof(mode_names[0]))
		return "?";
	return mode_names[mode];
}

static char **str_field(struct ga_config *cfg, const struct key *k)
{
	return (char **)((char *)cfg + k->offset);
}

static int set_str(struct ga_config *cfg, const struct key *k, const char *v)
{
	char *dup = strdup(v);

	if (!dup)
		return -ENOMEM;
	free(*str_field(cfg, k));
	*str_field(cfg, k) = dup;
	return 0;
}

int ga_config_init(struct ga_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->default_mode = GA_MODE_LOG;
	cfg->log_file_mode = 0600;
	cfg->tail_lines = 60;
	cfg->helper_max_rss = 256 * MiB;
	cfg->drain_timeout_ms = 5000;
	cfg->query_scheduler = true;
	cfg->log_max = 32 * MiB;
	cfg->keep_logs = GA_KEEP_FAILED;
	cfg->classify_max = 16 * MiB;
	cfg->classify_timeout_ms = 10000;
	cfg->recipient_policy = GA_RECIPIENTS_OWNER;
	cfg->max_recipients = 5;
	cfg->spool_entry_max = 4 * MiB;
	cfg->spool_total_max = 1024 * MiB;
	cfg->spool_user_share = 25;
	cfg->spool_quiet_s = 45;
	cfg->tls = GA_TLS_NONE;
	cfg->connect_timeout_s = 10;
	cfg->timeout_s = 60;
	cfg->attach_budget = 2 * MiB;
	cfg->collect_timeout_ms = 5000;
	cfg->max_age_s = 3 * 86400;
	cfg->retry_base_s = 60;
	cfg->rate_per_user_hour = 20;
	cfg->rate_global_hour = 500;
	cfg->webhook_timeout_s = 10;
	cfg->log_pattern = strdup("%w/gpualert-%j/%N.%s.%t.log");
	cfg->rules_dir = strdup(GA_DEFAULT_RULES_DIR);
	cfg->spool_dir = strdup(GA_DEFAULT_SPOOL_DIR);
	cfg->smtp_url = strdup("smtp://localhost:25");
	cfg->mail_from = strdup("gpualert@localhost");
	cfg->artifact_globs = strdup("");
	cfg->ca_file = strdup("");
	cfg->from_name = strdup("gpualert");
	cfg->subject_prefix = strdup("[gpualert]");
	cfg->footer = strdup("");
	cfg->help_url = strdup("");
	cfg->webhook_format = strdup("slack");
	cfg->webhook_allowed_hosts = strdup("");
	cfg->kernel_log = true;
	cfg->kernel_log_max_ms = 200;
	cfg->admin_period_s = 86400;
	cfg->nvidia_gpus_dir = strdup("/proc/driver/nvidia/gpus");
	cfg->admin_mail = strdup("");
	cfg->admin_webhook = strdup("");
	if (!cfg->nvidia_gpus_dir || !cfg->admin_mail || !cfg->admin_webhook)
		return -ENOMEM;
	if (!cfg->log_pattern || !cfg->rules_dir || !cfg->spool_dir ||
	    !cfg->smtp_url || !cfg->mail_from || !cfg->artifact_globs ||
	    !cfg->ca_file || !cfg->from_name || !cfg->subject_prefix ||
	    !cfg->footer || !cfg->help_url || !cfg->webhook_format ||
	    !cfg->webhook_allowed_hosts)
		return -ENOMEM;
	return 0;
}

void ga_config_finish(struct ga_config *cfg)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (keys[i].kind == K_STR || keys[i].kind == K_FORMAT)
			free(*str_field(cfg, &keys[i]));
	memset(cfg, 0, sizeof(*cfg));
}

static int parse_u64(const char *v, int base, uint64_t min, uint64_t max,
                     uint64_t *out)
{
	char *end;
	unsigned long long n;

	if (*v == '-' || *v == '\0')
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, base);
	if (errno || end == v)
		return -EINVAL;
	/* Sizes may carry a K/M/G suffix. */
	if (*end && base == 10 && !end[1]) {
		unsigned shift = *end == 'K'   ? 10
		                 : *end == 'M' ? 20
		                 : *end == 'G' ? 30
		                               : 0;

		if (!shift || n > (UINT64_MAX >> shift))
			return -EINVAL;
		n <<= shift;
		end++;
	}
	if (*end || n < min || n > max)
		return -EINVAL;
	*out = n;
	return 0;
}

/* Apply VALUE to key K.  Returns 0, -EINVAL (with *WHY set) or -ENOMEM. */
static int apply(struct ga_config *cfg, const struct key *k, const char *value,
                 const char **why)
{
	void *field = (char *)cfg + k->offset;
	uint64_t n;
	int v;

	switch (k->kind) {
	case K_STR:
		if (strlen(value) < k->min || strlen(value) > k->max) {
			*why = "value is empty or too long";
			return -EINVAL;
		}
		/* A value reaching the plugin must not smuggle control
		 * characters into paths, headers or logs. */
		for (const char *c = value; *c; c++) {
			if ((unsigned char)*c < 0x20) {
				*why = "value contains a control character";
				return -EINVAL;
			}
		}
		return set_str(cfg, k, value);
	case K_UINT:
	case K_U64:
		if (parse_u64(value, 10, k->min, k->max, &n) < 0) {
			*why = "not a number in the allowed range";
			return -EINVAL;
		}
		if (k->kind == K_UINT)
			*(unsigned *)field = (unsigned)n;
		else
			*(uint64_t *)field = n;
		return 0;
	case K_OCTAL:
		if (parse_u64(value, 8, k->min, k->max, &n) < 0) {
			*why = "not an octal file mode between 0400 and 0666";
			return -EINVAL;
		}
		*(unsigned *)field = (unsigned)n;
		return 0;
	case K_BOOL:
		if (!strcasecmp(value, "yes") || !strcasecmp(value, "true") ||
		    !strcmp(value, "1"))
			*(bool *)field = true;
		else if (!strcasecmp(value, "no") ||
		         !strcasecmp(value, "false") || !strcmp(value, "0"))
			*(bool *)field = false;
		else {
			*why = "not yes or no";
			return -EINVAL;
		}
		return 0;
	case K_NOTIFY:
		v = ga_notify_from_name(value);
		if (v < 0) {
			*why = "not always or fail";
			return -EINVAL;
		}
		*(enum ga_notify *)field = (enum ga_notify)v;
		return 0;
	case K_FORMAT:
		if (strcmp(value, "slack") && strcmp(value, "mattermost") &&
		    strcmp(value, "teams") && strcmp(value, "ntfy")) {
			*why = "not slack, mattermost, teams or ntfy";
			return -EINVAL;
		}
		return set_str(cfg, k, value);
	case K_MODE:
		v = ga_mode_from_name(value);
		if (v < 0) {
			*why = "not one of off, log, email, webhook";
			return -EINVAL;
		}
		*(enum ga_mode *)field = (enum ga_mode)v;
		return 0;
	case K_POLICY:
		if (!strcmp(value, "owner"))
			*(enum ga_recipient_policy *)field =
			        GA_RECIPIENTS_OWNER;
		else if (!strcmp(value, "domains"))
			*(enum ga_recipient_policy *)field =
			        GA_RECIPIENTS_DOMAINS;
		else {
			*why = "not owner or domains";
			return -EINVAL;
		}
		return 0;
	case K_KEEP:
		if (!strcmp(value, "all"))
			*(enum ga_keep *)field = GA_KEEP_ALL;
		else if (!strcmp(value, "failed"))
			*(enum ga_keep *)field = GA_KEEP_FAILED;
		else {
			*why = "not all or failed";
			return -EINVAL;
		}
		return 0;
	case K_TLS:
		if (!strcmp(value, "none"))
			*(enum ga_tls *)field = GA_TLS_NONE;
		else if (!strcmp(value, "starttls"))
			*(enum ga_tls *)field = GA_TLS_STARTTLS;
		else if (!strcmp(value, "try"))
			*(enum ga_tls *)field = GA_TLS_TRY;
		else if (!strcmp(value, "implicit"))
			*(enum ga_tls *)field = GA_TLS_IMPLICIT;
		else {
			*why = "not none, starttls, try or implicit";
			return -EINVAL;
		}
		return 0;
	}
	*why = "internal error";
	return -EINVAL;
}

static const struct key *find_key(const char *section, const char *name)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if ((!section || !strcmp(keys[i].section, section)) &&
		    !strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

#define CONFIG_FILE_MAX (1 << 20)

struct load_ctx {
	struct ga_config *cfg;
	struct ga_diag *diag;
	const char *path;
	char section[64];
	int errors;
};

static int on_ini(void *user, unsigned lineno, char *name, char *value)
{
	struct load_ctx *ctx = user;
	const struct key *k;
	const char *why = NULL;
	int rc;

	if (!name && value)
		return 0; /* a rejected line, counted by the reader */
	if (!value) {
		/* NULL NAME: a malformed header, keys below match nothing. */
		snprintf(ctx->section, sizeof(ctx->section), "%s",
		         name ? name : "");
		return 0;
	}
	k = ctx->section[0] ? find_key(ctx->section, name) : NULL;
	if (!k) {
		ga_diag_error(ctx->diag, ctx->path, lineno,
		              "unknown key '%s' in section [%s]", name,
		              ctx->section);
		ctx->errors++;
		return 0; /* keep going: report every problem */
	}
	rc = apply(ctx->cfg, k, value, &why);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0) {
		ga_diag_error(ctx->diag, ctx->path, lineno,
		              "[%s] %s = '%s': %s", ctx->section, name, value,
		              why);
		ctx->errors++;
	}
	return 0;
}

int ga_config_load(struct ga_config *cfg, const char *path,
                   struct ga_diag *diag)
{
	struct load_ctx ctx = {.cfg = cfg, .diag = diag, .path = path};
	char *text = NULL;
	size_t len = 0;
	int rc;

	rc = ga_read_file(path, CONFIG_FILE_MAX, &text, &len);
	if (rc == -EFBIG) {
		ga_diag_error(diag, path, 0, "larger than %d bytes",
		              CONFIG_FILE_MAX);
		return -EINVAL;
	}
	if (rc)
		return rc;
	rc = ga_ini_parse(path, text, len, on_ini, &ctx, diag);
	free(text);
	if (rc < 0)
		return rc;
	return rc + ctx.errors ? -EINVAL : 0;
}

int ga_config_set(struct ga_config *cfg, const char *key, const char *value,
                  const char *origin, struct ga_diag *diag)
{
	char section[32] = "";
	const char *name = key, *dot = strchr(key, '.');
	const struct key *k;
	const char *why = NULL;
	int rc;

	if (dot && (size_t)(dot - key) < sizeof(section)) {
		memcpy(section, key, (size_t)(dot - key));
		section[dot - key] = '\0';
		name = dot + 1;
	}
	k = find_key(dot ? section : NULL, name);
	if (!k) {
		ga_diag_error(diag, origin, 0, "unknown setting '%s'", key);
		return -EINVAL;
	}
	rc = apply(cfg, k, value, &why);
	if (rc == -EINVAL)
		ga_diag_error(diag, origin, 0, "%s=%s: %s", key, value, why);
	return rc;
}

size_t ga_config_n_keys(void)
{
	return sizeof(keys) / sizeof(keys[0]);
}

void ga_config_key(size_t i, const char **section, const char **name)
{
	*section = keys[i].section;
	*name = keys[i].name;
}

int ga_config_get(const struct ga_config *cfg, const char *key, char *buf,
                  size_t size)
{
	static const char *const policies[] = {"owner", "domains"};
	static const char *const tls[] = {"none", "starttls", "try",
	                                  "implicit"};
	const char *dot = strchr(key, '.');
	const struct key *k = NULL;
	const void *field;
	int n;

	for (size_t i = 0; dot && i < ga_config_n_keys(); i++)
		if (strlen(keys[i].section) == (size_t)(dot - key) &&
		    !strncmp(keys[i].section, key, (size_t)(dot - key)) &&
		    !strcmp(keys[i].name, dot + 1))
			k = &keys[i];
	if (!k)
		return -ENOENT;
	field = (const char *)cfg + k->offset;
	switch (k->kind) {
	case K_STR:
		n = snprintf(buf, size, "%s",
		             *(char *const *)field ? *(char *const *)field
		                                   : "");
		break;
	case K_UINT:
		n = snprintf(buf, size, "%u", *(const unsigned *)field);
		break;
	case K_U64:
		n = snprintf(buf, size, "%llu",
		             (unsigned long long)*(const uint64_t *)field);
		break;
	case K_OCTAL:
		n = snprintf(buf, size, "0%o", *(const unsigned *)field);
		break;
	case K_BOOL:
		n = snprintf(buf, size, "%s",
		             *(const bool *)field ? "yes" : "no");
		break;
	case K_MODE:
		n = snprintf(buf, size, "%s",
		             ga_mode_name(*(const enum ga_mode *)field));
		break;
	case K_POLICY:
		n = snprintf(
		        buf, size, "%s",
		        policies[*(const enum ga_recipient_policy *)field]);
		break;
	case K_TLS:
		n = snprintf(buf, size, "%s", tls[*(const enum ga_tls *)field]);
		break;
	case K_KEEP:
		n = snprintf(buf, size, "%s",
		             *(const enum ga_keep *)field == GA_KEEP_ALL
		                     ? "all"
		                     : "failed");
		break;
	case K_NOTIFY:
		n = snprintf(buf, size, "%s",
		             ga_notify_name(*(const enum ga_notify *)field));
		break;
	case K_FORMAT:
		n = snprintf(buf, size, "%s",
		             *(char *const *)field ? *(char *const *)field
		                                   : "");
		break;
	default:
		return -ENOENT;
	}
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}
