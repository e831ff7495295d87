/*
 * The floor under every one-round-trip row of the tcp table (get, g, fetch_add, compare_swap,
 * swap over UCX_TLS=tcp,self): one TCP round trip over loopback between two processes, with no
 * library in between. The parent sends 8 bytes, the child sends 8 bytes back; both have
 * TCP_NODELAY set and busy-poll with non-blocking recv(2), as UCX's tcp transport polls its
 * sockets while a PE waits (UCX adds an epoll_wait(2) and its own headers on top). Whatever an
 * OpenSHMEM library does over tcp, a get or an atomic costs at least this.
 *
 * Same statistics and output as latency.c: REPS timed loops of ITERS round trips after a
 * warm-up; one line "tcp round trip,8,floor,median_ns,min_ns" (mean per round trip of each
 * loop, median and minimum over the loops).
 *
 * The listening socket is bound to 127.0.0.1 on a port the kernel picks. The child proves it is
 * the child with 16 random bytes drawn before fork(2); a connection that does not start with
 * them within 5 s (another user's process on this machine) is closed and another accepted, at
 * most 16.
 *
 * Build: cc -O2 -o tcp_rtt tcp_rtt.c
 * Run:   ./tcp_rtt [iters N] [reps N]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MSG 8
#define TOKEN 16
#define MAX_ACCEPTS 16

static void die(const char *what)
{
    fprintf(stderr, "tcp_rtt: %s: %s\n", what, strerror(errno));
    exit(1);
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Receives exactly n bytes, spinning on non-blocking recv; returns 0, or -1 if the peer closed. */
static int recv_all(int fd, char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = recv(fd, buf + got, n - got, MSG_DONTWAIT);
        if (r > 0) {
            got += (size_t)r;
        } else if (r == 0) {
            return -1;
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            die("recv");
        }
    }
    return 0;
}

static void send_all(int fd, const char *buf, size_t n)
{
    size_t sent = 0;
    while (sent < n) {
        ssize_t r = send(fd, buf + sent, n - sent, MSG_NOSIGNAL);
        if (r > 0) {
            sent += (size_t)r;
        } else if (r < 0 && errno != EINTR && errno != EAGAIN) {
            die("send");
        }
    }
}

static void no_delay(int fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        die("setsockopt TCP_NODELAY");
}

static long parse_count(const char *name, const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 1 || v > 100000000) {
        fprintf(stderr, "tcp_rtt: %s must be an integer from 1 to 100000000, got '%s'\n", name, s);
        exit(2);
    }
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The child: connects, proves itself, then answers every 8 bytes with 8 bytes until closed. */
static void echo_child(const struct sockaddr_in *addr, const char *token)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        die("socket");
    if (connect(fd, (const struct sockaddr *)addr, sizeof *addr) != 0)
        die("connect");
    no_delay(fd);
    send_all(fd, token, TOKEN);
    char buf[MSG];
    while (recv_all(fd, buf, MSG) == 0)
        send_all(fd, buf, MSG);
    _exit(0);
}

/* Reads the TOKEN bytes a connection starts with, waiting at most 5 s for them; returns 0, or
 * -1 if they did not come (a peer that connects and stays silent must not stall the job). */
static int recv_token(int fd, char *buf)
{
    struct timeval wait_max = {.tv_sec = 5};
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait_max, sizeof wait_max) != 0)
        die("setsockopt SO_RCVTIMEO");
    size_t got = 0;
    while (got < TOKEN) {
        ssize_t r = recv(fd, buf + got, TOKEN - got, 0);
        if (r > 0)
            got += (size_t)r;
        else if (r == 0 || errno != EINTR)
            return -1;
    }
    return 0;
}

/* Accepts connections on `listener` until one starts with `token`; returns it. */
static int accept_child(int listener, const char *token)
{
    for (int tries = 0; tries < MAX_ACCEPTS; tries++) {
        int fd = accept(listener, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            die("accept");
        }
        char got[TOKEN];
        if (recv_token(fd, got) == 0 && memcmp(got, token, TOKEN) == 0)
            return fd;
        close(fd);
    }
    fprintf(stderr, "tcp_rtt: no connection from the child among %d accepted\n", MAX_ACCEPTS);
    exit(1);
}

int main(int argc, char **argv)
{
    long iters = 20000, reps = 15;
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "iters") == 0 || strcmp(argv[i], "--iters") == 0) && i + 1 < argc) {
            iters = parse_count("iters", argv[++i]);
        } else if ((strcmp(argv[i], "reps") == 0 || strcmp(argv[i], "--reps") == 0) && i + 1 < argc) {
            reps = parse_count("reps", argv[++i]);
        } else {
            fprintf(stderr, "usage: tcp_rtt [iters N] [reps N]\n");
            return 2;
        }
    }

    char token[TOKEN];
    if (getrandom(token, sizeof token, 0) != (ssize_t)sizeof token)
        die("getrandom");

    int listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0)
        die("socket");
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0)
        die("bind");
    socklen_t len = sizeof addr;
    if (getsockname(listener, (struct sockaddr *)&addr, &len) != 0)
        die("getsockname");
    if (listen(listener, 4) != 0)
        die("listen");
    /* accept(2) gives up after 10 s (a child that never connects must not hang the job). */
    struct timeval wait_max = {.tv_sec = 10};
    if (setsockopt(listener, SOL_SOCKET, SO_RCVTIMEO, &wait_max, sizeof wait_max) != 0)
        die("setsockopt SO_RCVTIMEO");

    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) {
        close(listener);
        echo_child(&addr, token);
    }
    int fd = accept_child(listener, token);
    close(listener);
    no_delay(fd);

    char buf[MSG] = {0};
    for (long i = 0; i < 1000; i++) {
        send_all(fd, buf, MSG);
        if (recv_all(fd, buf, MSG) != 0)
            goto child_gone;
    }
    double *loop_ns = malloc((size_t)reps * sizeof *loop_ns);
    if (!loop_ns)
        die("malloc");
    for (long r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++) {
            send_all(fd, buf, MSG);
            if (recv_all(fd, buf, MSG) != 0)
                goto child_gone;
        }
        loop_ns[r] = (now_ns() - t0) / (double)iters;
    }
    close(fd);
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "tcp_rtt: the echoing child failed\n");
        return 1;
    }
    qsort(loop_ns, (size_t)reps, sizeof *loop_ns, cmp_double);
    double median = reps % 2 ? loop_ns[reps / 2] : (loop_ns[reps / 2 - 1] + loop_ns[reps / 2]) / 2;
    printf("tcp round trip,%d,floor,%.1f,%.1f\n", MSG, median, loop_ns[0]);
    free(loop_ns);
    return 0;

child_gone:
    fprintf(stderr, "tcp_rtt: the echoing child closed the connection early\n");
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return 1;
}
