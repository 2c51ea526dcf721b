// SPDX-License-Identifier: GPL-2.0
/*
 * pfcost: run a command between two pfcost markers, so that the pfcost QEMU
 * plugin (qemu/boot.sh -P FILE) counts what it costs: instructions, memory
 * accesses and cache-line transfers on every vCPU, from just before the
 * fork to just after the command has been reaped. Without the plugin the
 * markers do nothing and the command just runs.
 *
 *   pfcost -- CMD [ARGS...]
 *
 * Then prints one line, "pfcost: CMD: N minor faults, exit S" (the
 * command's and its children's faults, getrusage), and exits with the
 * command's status (128+N if a signal N killed it).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pfcost.h"

int main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid;

	if (argc < 3 || strcmp(argv[1], "--")) {
		fprintf(stderr, "usage: pfcost -- CMD [ARGS...]\n");
		return 2;
	}
	fflush(stdout);
	pfcost_mark();
	pid = fork();
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "pfcost: cannot run %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		pfcost_mark();
		perror("pfcost");
		return 1;
	}
	pfcost_mark();
	status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("pfcost: %s: %ld minor faults, exit %d\n", argv[2], ru.ru_minflt, status);
	return status;
}
