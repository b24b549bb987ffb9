/*
 * memc_client PORT N: N set/get pairs to a memcached on 127.0.0.1:PORT
 * (loopback only), then "shutdown" (memcached -A).  Prints every reply, so
 * two runs can be compared byte for byte.  Waits up to 10 s for the
 * server; every request is answered before the next is sent.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int fd;
static char buf[65536];
static size_t have;

/* Reads until the reply ends with end (a line), prints it. */
static int reply(const char *end)
{
	for (;;) {
		buf[have] = 0;
		char *e = strstr(buf, end);
		if (e) {
			size_t n = (size_t)(e - buf) + strlen(end);
			fwrite(buf, 1, n, stdout);
			memmove(buf, buf + n, have - n);
			have -= n;
			return 0;
		}
		ssize_t r = read(fd, buf + have, sizeof buf - 1 - have);
		if (r <= 0)
			return -1;
		have += (size_t)r;
	}
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1])) };
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	long n = atol(argv[2]);
	for (int i = 0;; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
			break;
		close(fd);
		if (i == 100) {
			fprintf(stderr, "memc_client: no server on port %s\n", argv[1]);
			return 1;
		}
		nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	char req[256], v[64];
	for (long i = 1; i <= n; i++) {
		int vl = snprintf(v, sizeof v, "value-%ld-%ld", i, i * 7919 % 1000);
		int l = snprintf(req, sizeof req, "set key%ld 0 0 %d\r\n%s\r\n", i % 97, vl, v);
		if (write(fd, req, (size_t)l) != l || reply("\r\n") < 0)
			return 1;
		l = snprintf(req, sizeof req, "get key%ld\r\n", (i * 13) % 97);
		if (write(fd, req, (size_t)l) != l || reply("END\r\n") < 0)
			return 1;
	}
	if (write(fd, "shutdown\r\n", 10) != 10)
		return 1;
	close(fd);
	return 0;
}
