/*
 * The lean load generator of `bench_http`: keep-alive HTTP/1.1 clients on loopback, one request in flight each.
 *
 *   load PORT CLIENTS SECONDS REQUEST_FILE
 *
 * Opens CLIENTS connections to 127.0.0.1:PORT, sends each the request in REQUEST_FILE (the whole HTTP
 * request, head and body, as `bench_http._request` builds it), and sends it again on a connection as soon as
 * its answer is read, for SECONDS. It prints one line:
 *
 *   answered N not-answered N errors N seconds S
 *
 * An answer counts as answered when it is a 200 whose body holds a JSON-RPC result (`"result"`), as wrk's
 * script and the Python generator count them; otherwise not answered. A connection the server closes, or
 * that fails, is an error and is not used again. Answers are framed by their Content-Length; one without it
 * (chunked, or an event stream) ends the run with exit status 3, since this reader does not take it.
 *
 * Why it exists: on a machine whose cores the load generator shares with the servers, what it spends per
 * request is taken from them (benchmarks/README.md, "HTTP throughput"). This one spends only the system
 * calls a request needs (one write, one read, a share of one epoll_wait) and a look at the answer's head.
 * And it runs as a batch task (SCHED_BATCH): woken by an answer, it does not preempt a server at work, but
 * runs when a core is free or a time slice ends. Waking at every answer, it would otherwise cost two busy
 * workers on two cores 10 to 30 involuntary context switches per 100 requests, against fewer than one.
 * Linux only (epoll); `bench_http` builds it with the machine's C compiler when it is asked for.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 4096
#define MAX_REQUEST (1 << 20)

struct client {
    int fd;
    char *buffer;  /* what has arrived of the answer being read */
    size_t used, size;
    size_t head, expected;  /* the head's length and head + body, once the head is in (0 until then) */
    int status;
};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int send_all(int fd, const char *data, size_t length) {
    while (length > 0) {
        ssize_t sent = write(fd, data, length);
        if (sent < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        data += sent;
        length -= (size_t)sent;
    }
    return 0;
}

/* A connection that failed, or that the server closed: counted as an error and not used again. */
static void drop(struct client *c, int events, long *errors, int *alive) {
    (*errors)++;
    epoll_ctl(events, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    (*alive)--;
}

/* The head's length and the answer's whole length, once the head is in; 0 while it is not; -1: unreadable. */
static long read_head(struct client *c) {
    char *end = memmem(c->buffer, c->used, "\r\n\r\n", 4);
    if (end == NULL) return 0;
    size_t head = (size_t)(end - c->buffer) + 4;
    if (c->used < 12 || memcmp(c->buffer, "HTTP/1.", 7) != 0) return -1;
    c->status = atoi(c->buffer + 9);
    long length = -1;
    for (char *line = c->buffer; line < end;) {
        char *next = memmem(line, (size_t)(end - line) + 2, "\r\n", 2);
        if (next == NULL) break;
        if (next - line > 15 && strncasecmp(line, "content-length:", 15) == 0) length = atol(line + 15);
        if (next - line > 18 && strncasecmp(line, "transfer-encoding:", 18) == 0) return -1;
        line = next + 2;
    }
    if (length < 0) return -1;
    c->head = head;
    c->expected = head + (size_t)length;
    return (long)head;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: load PORT CLIENTS SECONDS REQUEST_FILE\n");
        return 2;
    }
    int port = atoi(argv[1]), clients = atoi(argv[2]);
    double seconds = atof(argv[3]);
    if (clients < 1 || clients > MAX_CLIENTS || seconds <= 0) {
        fprintf(stderr, "load: CLIENTS is 1 to %d and SECONDS above 0\n", MAX_CLIENTS);
        return 2;
    }
    FILE *file = fopen(argv[4], "rb");
    if (file == NULL) {
        perror("load: the request file");
        return 2;
    }
    static char request[MAX_REQUEST];
    size_t request_length = fread(request, 1, sizeof request, file);
    fclose(file);

    struct sched_param batch = {0};
    sched_setscheduler(0, SCHED_BATCH, &batch);  /* where it is refused, the run goes on as a normal task */

    struct sockaddr_in address = {0};
    address.sin_family = AF_INET;
    address.sin_port = htons((unsigned short)port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int events = epoll_create1(0);
    static struct client all[MAX_CLIENTS];
    for (int i = 0; i < clients; i++) {
        struct client *c = &all[i];
        c->fd = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(c->fd, (struct sockaddr *)&address, sizeof address) != 0) {
            perror("load: connect");
            return 1;
        }
        c->size = 64 * 1024;
        c->buffer = malloc(c->size);
        struct epoll_event event = {.events = EPOLLIN, .data.u32 = (unsigned)i};
        epoll_ctl(events, EPOLL_CTL_ADD, c->fd, &event);
    }

    long answered = 0, refused = 0, errors = 0;
    int alive = clients;
    double started = now(), until = started + seconds, current = started;
    for (int i = 0; i < clients; i++) {
        if (send_all(all[i].fd, request, request_length) != 0) drop(&all[i], events, &errors, &alive);
    }
    struct epoll_event ready[MAX_CLIENTS];
    while (alive > 0 && (current = now()) < until) {
        int wait = (int)((until - current) * 1000) + 1;
        int count = epoll_wait(events, ready, MAX_CLIENTS, wait < 100 ? wait : 100);
        if (count < 0 && errno != EINTR) {
            perror("load: epoll_wait");
            return 1;
        }
        current = now();
        for (int k = 0; k < count; k++) {
            struct client *c = &all[ready[k].data.u32];
            if (c->used == c->size) {
                c->size *= 2;
                c->buffer = realloc(c->buffer, c->size);
            }
            ssize_t got = read(c->fd, c->buffer + c->used, c->size - c->used);
            if (got <= 0) {
                if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
                drop(c, events, &errors, &alive);
                continue;
            }
            c->used += (size_t)got;
            if (c->expected == 0) {
                long head = read_head(c);
                if (head < 0) {
                    fprintf(stderr, "load: an answer this reader does not take (no Content-Length):\n%.*s\n",
                            (int)(c->used < 400 ? c->used : 400), c->buffer);
                    return 3;
                }
                if (head == 0) continue;
            }
            if (c->used < c->expected) continue;
            if (c->used > c->expected) {
                fprintf(stderr, "load: more came than was asked for\n");
                return 3;
            }
            int ok = c->status == 200 && memmem(c->buffer + c->head, c->expected - c->head, "\"result\"", 8) != NULL;
            if (current < until) {
                if (ok) answered++; else refused++;
            }
            c->used = c->head = c->expected = 0;
            if (current < until && send_all(c->fd, request, request_length) != 0) drop(c, events, &errors, &alive);
        }
    }
    printf("answered %ld not-answered %ld errors %ld seconds %.6f\n", answered, refused, errors, current - started);
    return 0;
}
