// SPDX-License-Identifier: GPL-2.0
/*
 * kmsglog: copy every record of the kernel log (/dev/kmsg, at every level)
 * to standard output as the console prints it, "[seconds.micros] text", one
 * record per line, until killed.  guest/init runs it on the third serial
 * port for the kernel-log judge: unlike the console, which the job's output
 * shares and which shows only what passes loglevel=, these lines are never
 * split and carry whole reports (a hung task's stack is KERN_INFO) and
 * kmemleak's findings (pr_info).  Records overwritten before they were read
 * are said as such, with their count.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	unsigned long long seq, next = 0, usec = 0;
	char rec[16384], out[16500];
	int fd = open("/dev/kmsg", O_RDONLY);

	if (fd < 0) {
		perror("kmsglog: /dev/kmsg");
		return 1;
	}
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		char *text, *nl;
		int len;

		if (n < 0 && errno == EPIPE)	/* overwritten: read on */
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {	/* said in the log, so that the judge sees it */
			len = snprintf(out, sizeof(out), "[%5llu.%06llu] kmsglog: %llu records lost: %s\n",
				       usec / 1000000, usec % 1000000, 1ULL,
				       n < 0 ? strerror(errno) : "end of file");
			return write(STDOUT_FILENO, out, len) < 0;
		}
		rec[n] = '\0';
		/* "level,seq,usec,flags[,...];text\n" then " KEY=value" lines */
		text = strchr(rec, ';');
		if (!text || sscanf(rec, "%*u,%llu,%llu", &seq, &usec) != 2)
			continue;
		text++;
		nl = strchr(text, '\n');
		if (nl)
			*nl = '\0';
		if (next && seq > next) {
			len = snprintf(out, sizeof(out),
				       "[%5llu.%06llu] kmsglog: %llu records lost\n",
				       usec / 1000000, usec % 1000000, seq - next);
			if (write(STDOUT_FILENO, out, len) < 0)
				return 1;
		}
		next = seq + 1;
		len = snprintf(out, sizeof(out), "[%5llu.%06llu] %s\n",
			       usec / 1000000, usec % 1000000, text);
		if (len > (int)sizeof(out) - 1)
			len = sizeof(out) - 1;
		if (write(STDOUT_FILENO, out, len) < 0)
			return 1;
	}
}
