/*
 * pause: the process that holds a pod's namespaces in the local runtime's
 * node (containerd's sandbox image). It sleeps until SIGINT or SIGTERM, and
 * reaps the children it inherits as PID 1 of a pod that shares its process
 * namespace. Built static (hack/pause.sh) so that its image needs no libc.
 */
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) {
	(void)sig;
	_exit(0);
}

static void reap(int sig) {
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0) {
	}
}

int main(void) {
	struct sigaction sa = {0};
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = stop;
	if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0) {
		return 1;
	}
	sa.sa_handler = reap;
	sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
	if (sigaction(SIGCHLD, &sa, NULL) < 0) {
		return 1;
	}
	for (;;) {
		pause();
	}
}
