/* SPDX-License-Identifier: MIT */
/* gpualert-send: `gpualert send`, in an executable of its own so that only
 * the delivery side links libcurl (see exec_send in main.c). */
#include "cli.h"

int main(int argc, char **argv)
{
	/* getopt prints argv[0] first: make its messages "gpualert: send:". */
	argv[0] = (char *)"gpualert: send";
	return cmd_send(argc, argv);
}
