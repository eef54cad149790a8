/* SPDX-License-Identifier: MIT */
/* srun, sbatch, salloc: reject a bad --gpualert value at submission, with
 * a message, so it is never discovered later on the node. */
#include "plugin.h"

#include <pwd.h>
#include <stdio.h>
#include <unistd.h>

#include "option.h"

int ga_local_option(const char *arg)
{
	struct ga_plugin *p = &ga_plugin_state;
	struct ga_alert a;
	struct passwd *pw = getpwuid(getuid());
	char err[512];
	int rc;

	/* A bare --gpualert (optional argument absent) means "email". */
	rc = ga_alert_parse(arg ? arg : "email", &p->cfg,
	                    pw ? pw->pw_name : NULL, &a, err, sizeof(err));
	if (rc < 0) {
		slurm_error("--gpualert: %s", err[0] ? err : "out of memory");
		return -1;
	}
	ga_alert_finish(&a);
	return 0;
}
