/* SPDX-License-Identifier: MIT */
/* gpualert SPANK plugin: the hooks, dispatched per context.
 *
 * An observer never breaks the job: every hook returns 0 except the
 * option callback in srun/sbatch/salloc rejecting a bad --gpualert value
 * at submission.  Work happens in local.c (srun, sbatch, salloc) and
 * remote.c (slurmstepd); the logic in common/ knows nothing of Slurm.
 */
#include "plugin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "ga-config.h"
#include "log.h"

SPANK_PLUGIN(gpualert, 1);

struct ga_plugin ga_plugin_state;

static struct spank_option gpualert_option = {
        "gpualert",
        "[fail:]MODE",
        "Report why the job failed: MODE = email (to you, the default), "
        "email:ADDR[,ADDR...], log (durable logs and report only), webhook "
        "(the site's chat), webhook:[slack:|teams:|ntfy:]URL (your own, to "
        "hosts the site allows), or off.  fail: notifies only when the job "
        "failed or hid a problem (always: every job).",
        2,
        0,
        ga_plugin_option_cb,
};

static void sink_remote(enum ga_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	/* In slurmstepd slurm_error() goes to the user's output as well as
	 * slurmd.log, slurm_info() only to slurmd.log (Slurm 22.05): keep
	 * internal problems out of the job's output. */
	if (level <= GA_LOG_INFO)
		slurm_info("%s", msg);
	else
		slurm_debug("%s", msg);
}

static void sink_local(enum ga_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	/* slurm_info in srun/sbatch prints on the user's terminal. */
	if (level <= GA_LOG_WARN)
		slurm_verbose("%s", msg);
	else
		slurm_debug("%s", msg);
}

static void sink_slurmd(enum ga_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level <= GA_LOG_WARN)
		slurm_error("%s", msg);
	else
		slurm_debug("%s", msg);
}

int ga_plugin_configure(int ac, char **av)
{
	struct ga_plugin *p = &ga_plugin_state;
	const char *path = GA_DEFAULT_CONFIG;
	struct ga_diag diag;
	int rc;

	if (p->cfg_ready)
		return 0;
	if (ga_config_init(&p->cfg) < 0)
		return -1;
	for (int i = 0; i < ac; i++)
		if (!strncmp(av[i], "config=", 7))
			path = av[i] + 7;
	ga_diag_init(&diag, "config");
	rc = ga_config_load(&p->cfg, path, &diag);
	if (rc < 0 && rc != -ENOENT && rc != -EINVAL)
		ga_log(GA_LOG_ERROR, "gpualert: config: cannot read %s: %s",
		       path, strerror(-rc));
	for (int i = 0; i < ac; i++) {
		char key[64];
		const char *eq = strchr(av[i], '=');

		if (!strncmp(av[i], "config=", 7))
			continue;
		if (!eq || (size_t)(eq - av[i]) >= sizeof(key)) {
			ga_diag_error(&diag, "plugstack.conf", 0,
			              "argument '%s' is not key=value", av[i]);
			continue;
		}
		memcpy(key, av[i], (size_t)(eq - av[i]));
		key[eq - av[i]] = '\0';
		/* A bad key or value is in DIAG, logged: the rest still apply. */
		if (ga_config_set(&p->cfg, key, eq + 1, "plugstack.conf",
		                  &diag) < 0)
			continue;
	}
	ga_diag_finish(&diag);
	p->cfg_ready = true;
	return 0;
}

/* srun, sbatch and salloc read the config only when --gpualert is given,
 * so that jobs without it do not pay for it: the plugstack arguments wait
 * here.  Slurm keeps them for as long as the plugin is loaded. */
static int local_ac;
static char **local_av;

int ga_plugin_option_cb(int val, const char *optarg, int remote)
{
	struct ga_plugin *p = &ga_plugin_state;
	char *v = NULL;

	(void)val;
	if (optarg) {
		v = strdup(optarg);
		if (!v)
			return remote ? 0 : -1;
	}
	free(p->opt_value);
	p->opt_value = v;
	p->opt_seen = true;
	if (remote)
		return 0; /* checked again in user_init; never fail there */
	if (ga_plugin_configure(local_ac, local_av) < 0)
		return -1;
	return ga_local_option(optarg);
}

static void register_option(spank_t sp)
{
	if (spank_option_register(sp, &gpualert_option) != ESPANK_SUCCESS)
		ga_log(GA_LOG_ERROR,
		       "gpualert: init: cannot register --gpualert");
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	switch (ctx) {
	case S_CTX_LOCAL:
	case S_CTX_ALLOCATOR:
		ga_log_set_sink(sink_local, NULL);
		local_ac = ac;
		local_av = av;
		register_option(sp);
		return 0;
	case S_CTX_REMOTE:
		ga_log_set_sink(sink_remote, NULL);
		break;
	case S_CTX_SLURMD:
		/* Once per slurmd start: the place to tell the admin about a
		 * broken config or plugstack line. */
		ga_log_set_sink(sink_slurmd, NULL);
		ga_plugin_configure(ac, av);
		return 0;
	case S_CTX_JOB_SCRIPT:
	case S_CTX_ERROR:
		return 0;
	}
	/* slurmstepd: jobs without --gpualert get the config's default
	 * mode, so it is read for every step. */
	if (ga_plugin_configure(ac, av) < 0)
		return 0;
	register_option(sp);
	ga_remote_init(sp);
	return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	return spank_remote(sp) ? ga_remote_user_init(sp) : 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	return spank_remote(sp) ? ga_remote_task_init(sp) : 0;
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	return spank_remote(sp) ? ga_remote_task_post_fork(sp) : 0;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	return spank_remote(sp) ? ga_remote_task_exit(sp) : 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_REMOTE)
		return ga_remote_exit(sp);
	return 0;
}
