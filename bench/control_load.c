/* The control-socket load generator and its floor, in C so the measuring side adds no interpreter lock.
 *
 *   control_load load PATH COMMAND CLIENTS PER_CLIENT   CLIENTS threads, each PER_CLIENT requests one after the
 *                                                        other (connect, one line, read the reply line, close);
 *                                                        prints each latency in ms, one a line, and "failed N"
 *                                                        on stderr when some were refused or broken
 *   control_load echo PATH                               the floor: one thread, poll over the listener and its
 *                                                        clients, one fixed reply line per request line
 *
 * Built by bench/daemon_bench.py with gcc (scripts/install-deps.sh installs it). Loopback (a Unix socket) only;
 * `echo` runs until killed.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *path, *command;
static int per_client;
static double *latencies;
static int failures;
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int connect_to(const char *socket_path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, socket_path, sizeof address.sun_path - 1);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&address, sizeof address) == 0) return fd;
    if (fd >= 0) close(fd);
    return -1;
}

/* One request: 1 when a reply line starting {"ok":true came back. */
static int request(void) {
    int fd = connect_to(path);
    if (fd < 0) return 0;
    char line[512], reply[65536];
    int length = snprintf(line, sizeof line, "%s\n", command);
    if (write(fd, line, length) != length) { close(fd); return 0; }
    size_t got = 0;
    for (;;) {
        ssize_t n = read(fd, reply + got, sizeof reply - 1 - got);
        if (n <= 0) break;
        got += n;
        if (memchr(reply, '\n', got) || got == sizeof reply - 1) break;
    }
    close(fd);
    reply[got] = 0;
    return strncmp(reply, "{\"ok\":true", 10) == 0;
}

static void *client(void *argument) {
    long id = (long)argument;
    for (int i = 0; i < per_client; i++) {
        double start = now_ms();
        int ok = request();
        latencies[id * per_client + i] = ok ? now_ms() - start : -1;
        if (!ok) { pthread_mutex_lock(&failures_lock); failures++; pthread_mutex_unlock(&failures_lock); }
    }
    return NULL;
}

static int load(int clients) {
    latencies = calloc((size_t)clients * per_client, sizeof *latencies);
    pthread_t *threads = calloc(clients, sizeof *threads);
    if (!latencies || !threads) return 1;
    for (long i = 0; i < clients; i++)
        if (pthread_create(&threads[i], NULL, client, (void *)i) != 0) { perror("pthread_create"); return 1; }
    for (int i = 0; i < clients; i++) pthread_join(threads[i], NULL);
    for (long i = 0; i < (long)clients * per_client; i++)
        if (latencies[i] >= 0) printf("%.4f\n", latencies[i]);
    if (failures) fprintf(stderr, "failed %d\n", failures);
    return 0;
}

enum { MAX_CLIENTS = 1024 };

static int echo(void) {
    unlink(path);
    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, path, sizeof address.sun_path - 1);
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 128) != 0) {
        perror("echo: listen");
        return 1;
    }
    static const char answer[] = "{\"ok\":true,\"text\":\"help\"}\n";
    struct pollfd fds[MAX_CLIENTS + 1];
    int count = 0;
    for (;;) {
        fds[0] = (struct pollfd){.fd = listener, .events = POLLIN};
        if (poll(fds, count + 1, -1) < 0 && errno != EINTR) return 1;
        for (int i = 1; i <= count; i++) {
            if (!fds[i].revents) continue;
            char buffer[4096];
            ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
            if (n > 0 && memchr(buffer, '\n', n)) (void)!write(fds[i].fd, answer, sizeof answer - 1);
            if (n > 0 && !memchr(buffer, '\n', n)) continue;
            close(fds[i].fd);
            fds[i--] = fds[count--];
        }
        if (fds[0].revents & POLLIN) {
            int fd;
            while (count < MAX_CLIENTS && (fd = accept(listener, NULL, NULL)) >= 0)
                fds[++count] = (struct pollfd){.fd = fd, .events = POLLIN};
        }
    }
}

int main(int argc, char **argv) {
    if (argc == 6 && strcmp(argv[1], "load") == 0) {
        path = argv[2];
        command = argv[3];
        per_client = atoi(argv[5]);
        return load(atoi(argv[4]));
    }
    if (argc == 3 && strcmp(argv[1], "echo") == 0) {
        path = argv[2];
        return echo();
    }
    fprintf(stderr, "usage: control_load load PATH COMMAND CLIENTS PER_CLIENT | control_load echo PATH\n");
    return 64;
}
