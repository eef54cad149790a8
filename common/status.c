/* SPDX-License-Identifier: MIT */
#include "status.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

#include "util.h"

void ga_status_init(struct ga_status *st)
{
	memset(st, 0, sizeof(*st));
}

void ga_status_from_wait(struct ga_status *st, int wstatus)
{
	ga_status_init(st);
	st->known = true;
	if (WIFSIGNALED(wstatus))
		st->signal = WTERMSIG(wstatus);
	else if (WIFEXITED(wstatus))
		st->exit_code = WEXITSTATUS(wstatus);
}

void ga_status_from_int(struct ga_status *st, int code)
{
	ga_status_init(st);
	st->known = true;
	if (code < 0)
		st->signal = -code;
	else
		st->exit_code = code;
}

bool ga_status_failed(const struct ga_status *st)
{
	if (!st->known)
		return false;
	return st->exit_code != 0 || st->signal != 0 ||
	       st->state != GA_STATE_NONE || st->oom_kills > 0 ||
	       st->failed_in_log;
}

int ga_status_shell_code(const struct ga_status *st)
{
	if (st->signal)
		return 128 + st->signal;
	return st->exit_code;
}

static const struct {
	int num;
	const char *name;
} signals[] = {
        {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"},
        {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},
        {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"},
        {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
        {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
        {SIGCHLD, "SIGCHLD"}, {SIGCONT, "SIGCONT"}, {SIGSTOP, "SIGSTOP"},
        {SIGTSTP, "SIGTSTP"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"},
        {SIGSYS, "SIGSYS"},
};

const char *ga_signal_name(int sig)
{
	for (size_t i = 0; i < GA_ARRAY_LEN(signals); i++)
		if (signals[i].num == sig)
			return signals[i].name;
	return NULL;
}

int ga_signal_from_name(const char *name)
{
	char *end;
	long n;

	if (!name || !*name)
		return -1;
	n = strtol(name, &end, 10);
	if (*end == '\0')
		return (n > 0 && n < 65) ? (int)n : -1;
	if (strncasecmp(name, "SIG", 3) == 0)
		name += 3;
	for (size_t i = 0; i < GA_ARRAY_LEN(signals); i++)
		if (strcasecmp(signals[i].name + 3, name) == 0)
			return signals[i].num;
	return -1;
}

static const char *const state_names[GA_STATE_COUNT] = {
        [GA_STATE_NONE] = "NONE",
        [GA_STATE_TIMEOUT] = "TIMEOUT",
        [GA_STATE_CANCELLED] = "CANCELLED",
        [GA_STATE_PREEMPTED] = "PREEMPTED",
        [GA_STATE_NODE_FAIL] = "NODE_FAIL",
        [GA_STATE_OUT_OF_MEMORY] = "OUT_OF_MEMORY",
        [GA_STATE_DEADLINE] = "DEADLINE",
};

const char *ga_sched_state_name(enum ga_sched_state s)
{
	if ((unsigned)s >= GA_STATE_COUNT)
		return "?";
	return state_names[s];
}

int ga_sched_state_from_name(const char *name)
{
	for (int i = 0; i < GA_STATE_COUNT; i++)
		if (strcasecmp(state_names[i], name) == 0)
			return i;
	return -1;
}
