/* SPDX-License-Identifier: MIT */
/* gpualert run: wrap any command the way the plugin wraps a Slurm task,
 * with the same code (common/task.h): the output file followed or the
 * durable log created before the command starts, output passed on byte
 * for byte, read back and classified, and one report spooled.  The exit
 * status is the command's (128+N when killed by signal N), whatever
 * happens to gpualert. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "artifacts.h"
#include "collector.h"
#include "cli.h"
#include "config.h"
#include "diag.h"
#include "ga-config.h"
#include "log.h"
#include "logfile.h"
#include "option.h"
#include "report.h"
#include "spool.h"
#include "task.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: gpualert run [--mode MODE] [--log PATH] [--rules DIR]\n"
	        "                    [--config FILE] -- CMD [ARGS...]\n\n"
	        "Run CMD with its output captured like a Slurm task under the\n"
	        "gpualert plugin: a durable log (header first), the output passed\n"
	        "through unchanged, a verdict and a report in the spool.\n\n"
	        "  --mode MODE     off, log, email, email:ADDR[,ADDR...], webhook\n"
	        "                  (default: the config's default_mode)\n"
	        "  --log PATH      the durable log (default: the config's log_pattern;\n"
	        "                  %%j is run-<host>-<pid>-<time>, or $GPUALERT_JOB_ID)\n"
	        "  --rules DIR     admin rules directory\n"
	        "  --config FILE   gpualert.conf (default " GA_DEFAULT_CONFIG
	        ")\n\n"
	        "Exit status: CMD's, 128+N if it was killed by signal N; 127/126 when\n"
	        "it cannot be executed; 2 for a bad gpualert command line.\n");
}

static volatile sig_atomic_t forward_to;

static void forward(int sig)
{
	if (forward_to > 0)
		kill(forward_to, sig);
}

static int shell_status(int ws)
{
	if (WIFSIGNALED(ws))
		return 128 + WTERMSIG(ws);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 1;
}

int cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"mode", required_argument, NULL, 'm'},
	        {"log", required_argument, NULL, 'l'},
	        {"rules", required_argument, NULL, 'r'},
	        {"config", required_argument, NULL, 'c'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	const char *mode_arg = NULL, *log_arg = NULL, *rules_arg = NULL;
	const char *config_path = NULL;
	char host[256] = "localhost", job[320], cwd[PATH_MAX], path[PATH_MAX];
	char err[512], logerr[PATH_MAX + 128] = "";
	struct ga_config cfg;
	struct ga_alert alert;
	struct ga_collector *coll = NULL;
	struct ga_diag diag;
	struct passwd *pw;
	const char *user, *name;
	struct sigaction sa, old_int, old_quit, old_term, old_hup;
	time_t start;
	bool job_from_env;
	pid_t child;
	int c, ws = 0, rc;

	/* The command's stderr is the user's: only problems go there. */
	if (!getenv("GPUALERT_DEBUG"))
		ga_log_set_level(GA_LOG_WARN);
	optind = 1;
	while ((c = getopt_long(argc, argv, "+m:l:r:c:h", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'm':
			mode_arg = optarg;
			break;
		case 'l':
			log_arg = optarg;
			break;
		case 'r':
			rules_arg = optarg;
			break;
		case 'c':
			config_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind >= argc) {
		cli_error("run: no command given");
		usage(stderr);
		return CLI_USAGE;
	}
	/* Paths the user named must exist (exit 2 before CMD runs). */
	if ((config_path && cli_check_path("run: --config", config_path) < 0) ||
	    (rules_arg && cli_check_path("run: --rules", rules_arg) < 0))
		return CLI_USAGE;
	if (!config_path)
		config_path = GA_DEFAULT_CONFIG;
	argv += optind;
	argc -= optind;

	if (ga_config_init(&cfg) < 0) {
		cli_error("run: out of memory");
		execvp(argv[0], argv);
		return errno == ENOENT ? 127 : 126;
	}
	ga_diag_init(&diag, "config");
	rc = ga_config_load(&cfg, config_path, &diag);
	if (rc < 0 && rc != -ENOENT && rc != -EINVAL)
		cli_error("run: config: %s: %s", config_path, strerror(-rc));
	ga_diag_finish(&diag);
	if (rules_arg)
		ga_config_set(&cfg, "rules_dir", rules_arg, "--rules", NULL);
	pw = getpwuid(getuid());
	user = pw ? pw->pw_name : "unknown";
	if (ga_alert_parse(mode_arg, &cfg, user, &alert, err, sizeof(err)) <
	    0) {
		cli_error("run: --mode: %s", err);
		ga_config_finish(&cfg);
		return CLI_USAGE;
	}
	if (alert.mode == GA_MODE_OFF) {
		ga_alert_finish(&alert);
		ga_config_finish(&cfg);
		execvp(argv[0], argv);
		cli_error("run: cannot execute %s: %s", argv[0],
		          strerror(errno));
		return errno == ENOENT ? 127 : 126;
	}

	gethostname(host, sizeof(host) - 1);
	start = time(NULL);
	job_from_env = getenv("GPUALERT_JOB_ID") && *getenv("GPUALERT_JOB_ID");
	if (job_from_env)
		snprintf(job, sizeof(job), "%s", getenv("GPUALERT_JOB_ID"));
	else
		snprintf(job, sizeof(job), "run-%s-%d-%lld", host,
		         (int)getpid(), (long long)start);
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), "/");
	name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	path[0] = '\0';
	if (log_arg) {
		if (log_arg[0] == '/')
			snprintf(path, sizeof(path), "%s", log_arg);
		else if ((size_t)snprintf(path, sizeof(path), "%s/%s", cwd,
		                          log_arg) >= sizeof(path))
			snprintf(logerr, sizeof(logerr),
			         "--log: path too long");
	}

	coll = ga_collector_create(getuid());
	child = fork();
	if (child == 0) {
		struct ga_task_ids ids = {
		        .job_id = job,
		        .step_id = "0",
		        .task_id = 0,
		        .user = user,
		        .job_name = name,
		        .node = host,
		        .work_dir = cwd,
		        .argc = argc,
		        .argv = argv,
		        .start = start,
		        /* A job id of our own making is unique. */
		        .unique = !job_from_env,
		};

		if (logerr[0])
			cli_error("run: %s", logerr);
		else if (coll)
			ga_task_begin(&cfg, &ids, ga_collector_task_fd(coll),
			              path[0] ? path : NULL);
		execvp(argv[0], argv);
		/* The task's own last words: they reach its record. */
		fprintf(stderr, "gpualert: run: cannot execute %s: %s\n",
		        argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	if (child < 0) {
		cli_error("run: cannot fork: %s", strerror(errno));
		ga_collector_destroy(coll);
		execvp(argv[0], argv);
		return errno == ENOENT ? 127 : 126;
	}
	/* Like system(3): the terminal's ^C and ^\ reach the command directly;
	 * a TERM or HUP sent to us is passed on. */
	forward_to = child;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGQUIT, &sa, &old_quit);
	sa.sa_handler = forward;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	while (waitpid(child, &ws, 0) < 0 && errno == EINTR)
		;
	forward_to = 0;

	if (coll) {
		struct ga_task_end end = {
		        .task_id = 0,
		        .wstatus = ws,
		        .start = (double)start,
		        .node = host,
		};
		struct ga_report r;
		struct timespec now;

		ga_collector_close_task_end(coll);
		(void)ga_collector_finish_task(coll, 0,
		                               (int)cfg.drain_timeout_ms, NULL);
		clock_gettime(CLOCK_REALTIME, &now);
		end.end = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
		ga_report_init(&r);
		ga_report_put(&r.origin, "run");
		ga_report_put(&r.job_id, job);
		ga_report_put(&r.step_id, "0");
		ga_report_put(&r.job_name, name);
		ga_report_put(&r.user, user);
		r.uid = getuid();
		r.gid = getgid();
		ga_report_put(&r.node, host);
		ga_report_put(&r.work_dir, cwd);
		{
			struct ga_buf cmd;

			ga_buf_init(&cmd);
			for (int i = 0; i < argc && cmd.len < 4096; i++) {
				if (i)
					ga_buf_putc(&cmd, ' ');
				ga_buf_puts(&cmd, argv[i]);
			}
			ga_report_put(&r.command, cmd.data ? cmd.data : "");
			ga_buf_finish(&cmd);
		}
		ga_report_put(&r.mode, ga_mode_name(alert.mode));
		for (size_t i = 0; i < alert.n_recipients; i++)
			if (ga_report_add_recipient(&r, alert.recipients[i]))
				cli_error("run: recipient %s left out of the "
				          "report: out of memory or too many",
				          alert.recipients[i]);
		r.start_time = start;
		r.end_time = now.tv_sec;
		ga_task_conclude(&cfg, coll, NULL, &end, 1, getuid(), getgid(),
		                 false, &r);
		ga_report_choose_root(&r);
		{
			/* Reserve first, then the files, then the report
			 * (spool.h); failures are logged by the spool. */
			const char *log = r.n_tasks ? r.tasks[0].log_path
			                            : NULL;
			bool files = r.root_task >= 0 && log &&
			             (alert.mode == GA_MODE_EMAIL ||
			              alert.mode == GA_MODE_WEBHOOK);
			const char *logs[1] = {log};
			struct ga_spool_slot slot;
			int src = ga_spool_slot_open(
			        &cfg, &r, files ? cfg.attach_budget : 0, &slot);

			/* A report whose files could not be collected still
			 * goes, without them: the collector logged why. */
			if (!src && slot.att_budget &&
			    ga_artifacts_collect(&slot, getuid(), getgid(), cwd,
			                         logs, 1, cfg.artifact_globs,
			                         cfg.collect_timeout_ms))
				ga_log(GA_LOG_INFO,
				       "gpualert: run: %s goes without its files",
				       job);
			if (!src)
				src = ga_spool_slot_commit(&slot);
			ga_spool_slot_close(&slot);
			/* The command's status stays the job's: a report
			 * that could not be spooled is said on stderr. */
			if (src)
				cli_error("run: the report of %s was not "
				          "spooled: %s",
				          job, strerror(-src));
		}
		if (getenv("GPUALERT_DEBUG"))
			fprintf(stderr, "gpualert: run: %s: class %s\n", job,
			        ga_class_name(ga_report_class(&r)));
		ga_report_finish(&r);
		ga_collector_destroy(coll);
	}
	ga_alert_finish(&alert);
	ga_config_finish(&cfg);
	return shell_status(ws);
}
