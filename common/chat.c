/* SPDX-License-Identifier: MIT */
#include "chat.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "taxonomy.h"

/* Slack's markup (api.slack.com, "Formatting text": escape &, <, >) and
 * Mattermost's mentions: "@channel" in a job name must not notify. */
static void put_slack(struct ga_buf *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		switch (s[i]) {
		case '&':
			ga_buf_puts(out, "&amp;");
			break;
		case '<':
			ga_buf_puts(out, "&lt;");
			break;
		case '>':
			ga_buf_puts(out, "&gt;");
			break;
		case '@':
			ga_buf_putc(out, '@');
			if (i + 1 < len &&
			    ((s[i + 1] >= 'a' && s[i + 1] <= 'z') ||
			     (s[i + 1] >= 'A' && s[i + 1] <= 'Z')))
				ga_buf_puts(out, "\xe2\x81\xa0");
			break;
		default:
			ga_buf_putc(out, s[i]);
		}
	}
}

/* Adaptive Card TextBlock Markdown (bold, italic, lists, links):
 * backslash-escape its characters so a job name stays text. */
static void put_teams(struct ga_buf *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (strchr("\\*_[]()~`#>-+!|", s[i]) && s[i])
			ga_buf_putc(out, '\\');
		ga_buf_putc(out, s[i]);
	}
}

/* One line of user-influenced text, control characters as spaces. */
static void clean_line(struct ga_buf *out, const char *s)
{
	struct ga_buf t;

	if (!s)
		return;
	ga_buf_init(&t);
	ga_utf8_sanitize(&t, s, strlen(s));
	for (size_t i = 0; i < t.len; i++)
		if ((unsigned char)t.data[i] < 0x20)
			t.data[i] = ' ';
	ga_buf_append(out, t.data ? t.data : "", t.len);
	ga_buf_finish(&t);
}

int ga_chat_payload(const struct ga_mail *m, enum ga_chat_format format,
                    struct ga_buf *out, char *title, size_t title_size)
{
	struct ga_mail_summary s;
	struct ga_buf subj, lines[3], esc;
	size_t n_lines = 0;
	int first = 1;

	if (ga_mime_summary(m, &s) < 0)
		return -EINVAL;
	ga_buf_init(&subj);
	ga_buf_init(&esc);
	for (size_t i = 0; i < 3; i++)
		ga_buf_init(&lines[i]);
	{
		struct ga_buf raw;

		ga_buf_init(&raw);
		ga_mime_subject(m, &raw);
		clean_line(&subj, raw.data);
		ga_buf_finish(&raw);
	}
	if (s.hint) {
		ga_buf_puts(&lines[n_lines], "Hint: ");
		clean_line(&lines[n_lines++], s.hint);
	}
	if (s.evidence) {
		ga_buf_printf(&lines[n_lines], "line %" PRIu64 ": ",
		              s.evidence->line);
		clean_line(&lines[n_lines++], s.evidence->text);
	}
	if (title && title_size) {
		size_t k = 0;

		for (size_t i = 0; i < subj.len && k + 1 < title_size; i++) {
			unsigned char c = (unsigned char)subj.data[i];

			if (c >= 0x20 && c < 0x7f)
				title[k++] = (char)c;
			else if (c >= 0xc0)
				title[k++] = '?';
		}
		title[k] = '\0';
	}
	switch (format) {
	case GA_CHAT_NTFY:
		for (size_t i = 0; i < n_lines; i++) {
			ga_buf_append(out, lines[i].data, lines[i].len);
			ga_buf_putc(out, '\n');
		}
		if (!n_lines) {
			ga_buf_append(out, subj.data, subj.len);
			ga_buf_putc(out, '\n');
		}
		break;
	case GA_CHAT_TEAMS:
		ga_buf_puts(out,
		            "{\"type\":\"message\",\"attachments\":[{"
		            "\"contentType\":"
		            "\"application/vnd.microsoft.card.adaptive\","
		            "\"contentUrl\":null,\"content\":{\"$schema\":"
		            "\"http://adaptivecards.io/schemas/"
		            "adaptive-card.json\",\"type\":\"AdaptiveCard\","
		            "\"version\":\"1.4\",\"body\":[");
		put_teams(&esc, subj.data ? subj.data : "", subj.len);
		ga_buf_puts(out,
		            "{\"type\":\"TextBlock\",\"weight\":\"Bolder\","
		            "\"wrap\":true,\"color\":");
		ga_json_str(out, s.failed ? "Attention"
		                          : (s.finding ? "Warning" : "Good"));
		ga_buf_puts(out, ",\"text\":");
		ga_json_string(out, esc.data ? esc.data : "", esc.len);
		ga_buf_putc(out, '}');
		for (size_t i = 0; i < n_lines; i++) {
			ga_buf_reset(&esc);
			put_teams(&esc, lines[i].data ? lines[i].data : "",
			          lines[i].len);
			ga_buf_puts(out, ",{\"type\":\"TextBlock\","
			                 "\"wrap\":true,\"text\":");
			ga_json_string(out, esc.data ? esc.data : "", esc.len);
			ga_buf_putc(out, '}');
		}
		ga_buf_puts(out, "]}}]}");
		break;
	case GA_CHAT_SLACK:
	default:
		put_slack(&esc, subj.data ? subj.data : "", subj.len);
		for (size_t i = 0; i < n_lines; i++) {
			ga_buf_putc(&esc, '\n');
			put_slack(&esc, lines[i].data ? lines[i].data : "",
			          lines[i].len);
		}
		ga_buf_putc(out, '{');
		ga_json_key(out, &first, "text");
		ga_json_string(out, esc.data ? esc.data : "", esc.len);
		ga_json_key(out, &first, "gpualert");
		{
			int f2 = 1;

			ga_buf_putc(out, '{');
			ga_json_key(out, &f2, "job_id");
			ga_json_str(out, s.job_id);
			ga_json_key(out, &f2, "job_name");
			ga_json_str(out, s.job_name);
			ga_json_key(out, &f2, "user");
			ga_json_str(out, s.user);
			ga_json_key(out, &f2, "state");
			ga_json_str(out, s.state);
			ga_json_key(out, &f2, "class");
			ga_json_str(out, ga_class_name(s.cls));
			ga_json_key(out, &f2, "node");
			ga_json_str(out, s.node);
			ga_json_key(out, &f2, "reports");
			ga_buf_printf(out, "%zu", s.n_reports);
			ga_buf_putc(out, '}');
		}
		ga_buf_putc(out, '}');
		break;
	}
	ga_buf_finish(&subj);
	ga_buf_finish(&esc);
	for (size_t i = 0; i < 3; i++)
		ga_buf_finish(&lines[i]);
	return out->failed ? -ENOMEM : 0;
}
