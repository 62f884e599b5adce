/*
 * The floor for deploy/bench/compare.sh: the least an IRC server can do for chorus-bench's scenarios.
 *
 * One epoll loop on 127.0.0.1; NICK/USER get a ten-line welcome, JOIN a JOIN, NAMES and 366, PRIVMSG
 * to a channel goes to its other members, PING gets PONG, QUIT closes. No history, no accounts, no
 * limits, no checks beyond not crashing. It does what the issue asks of a fast server (and Chorus
 * does): each client's output is coalesced and sent once per loop turn, TCP_NODELAY is on, and a line
 * for a channel is formatted once for all its members. What Chorus costs above it is Chorus's own.
 *
 * Build and run: gcc -O2 -o relay deploy/bench/relay.c && ./relay 16670
 * Not a product: a benchmark reference only, never built by the package or CI.
 */
#define _GNU_SOURCE  /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

enum { MAX_LINE = 512, READ_SIZE = 65536, SLOTS = 1 << 16 };

typedef struct Room Room;
typedef struct {
    int fd;
    char nick[32];
    int has_user, registered, dirty, closing;
    Room *room;        /* chorus-bench joins one channel per connection */
    char partial[MAX_LINE];  /* the start of a line whose end has not come yet */
    size_t partial_len;
    char *out;
    size_t out_len, out_cap;
} Conn;

struct Room {
    char name[64];
    Conn **members;
    size_t count, cap;
};

static Conn *conns[SLOTS];    /* by file descriptor */
static Room *rooms[SLOTS];    /* open addressing by name hash */
static Conn *dirty[SLOTS];
static size_t dirty_count;
static int ep;

static void out(Conn *c, const char *bytes, size_t n) {
    if (c->closing) return;
    if (c->out_len + n > c->out_cap) {
        c->out_cap = (c->out_len + n) * 2;
        c->out = realloc(c->out, c->out_cap);
        if (!c->out) abort();
    }
    memcpy(c->out + c->out_len, bytes, n);
    c->out_len += n;
    if (!c->dirty) { c->dirty = 1; dirty[dirty_count++] = c; }
}

static void outf(Conn *c, const char *fmt, ...) {
    char line[MAX_LINE + 64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0) out(c, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static Room *room_named(const char *name) {
    unsigned h = 2166136261u;
    for (const char *p = name; *p; p++) h = (h ^ (unsigned char)*p) * 16777619u;
    for (unsigned i = h % SLOTS;; i = (i + 1) % SLOTS) {
        if (!rooms[i]) {
            rooms[i] = calloc(1, sizeof(Room));
            snprintf(rooms[i]->name, sizeof rooms[i]->name, "%s", name);
            return rooms[i];
        }
        if (strcmp(rooms[i]->name, name) == 0) return rooms[i];
    }
}

/* The same bytes to every member but `except`. */
static void to_room(Room *r, Conn *except, const char *line, size_t n) {
    for (size_t i = 0; i < r->count; i++)
        if (r->members[i] != except) out(r->members[i], line, n);
}

static void leave(Conn *c, const char *reason) {
    Room *r = c->room;
    if (!r) return;
    for (size_t i = 0; i < r->count; i++)
        if (r->members[i] == c) { r->members[i] = r->members[--r->count]; break; }
    c->room = NULL;
    char line[MAX_LINE];
    int n = snprintf(line, sizeof line, ":%s!u@127.0.0.1 QUIT :%s\r\n", c->nick, reason);
    to_room(r, NULL, line, (size_t)n);
}

static void close_conn(Conn *c) {
    leave(c, "Connection closed");
    c->closing = 1;  /* its dirty-list entry is skipped, then freed at the end of the turn */
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    conns[c->fd] = NULL;
}

static void welcome(Conn *c) {
    static const char *const lines[] = {
        "001 %s :Welcome to the relay %s", "002 %s :Your host is relay.bench", "003 %s :This server was created today",
        "004 %s relay.bench relay-1 i nt", "005 %s CHANTYPES=# NICKLEN=30 :are supported by this server",
        "251 %s :There are some users", "375 %s :- relay.bench Message of the day -",
        "372 %s :- Welcome to the benchmark.", "376 %s :End of /MOTD command.", "221 %s +i",
    };
    c->registered = 1;
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        char fmt[128];
        snprintf(fmt, sizeof fmt, ":relay.bench %s\r\n", lines[i]);
        outf(c, fmt, c->nick, c->nick);
    }
}

static void join(Conn *c, const char *name) {
    if (c->room || name[0] != '#') return;
    Room *r = room_named(name);
    if (r->count == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 8;
        r->members = realloc(r->members, r->cap * sizeof *r->members);
        if (!r->members) abort();
    }
    r->members[r->count++] = c;
    c->room = r;
    char line[MAX_LINE];
    int n = snprintf(line, sizeof line, ":%s!u@127.0.0.1 JOIN %s\r\n", c->nick, name);
    to_room(r, NULL, line, (size_t)n);
    /* NAMES in lines of at most ~400 bytes, as servers split them. */
    n = snprintf(line, sizeof line, ":relay.bench 353 %s = %s :", c->nick, name);
    size_t len = (size_t)n;
    for (size_t i = 0; i < r->count; i++) {
        size_t nl = strlen(r->members[i]->nick);
        if (len + nl + 3 > 400) { out(c, line, len); out(c, "\r\n", 2); len = (size_t)n; }
        memcpy(line + len, r->members[i]->nick, nl);
        len += nl;
        line[len++] = ' ';
    }
    out(c, line, len - 1);
    out(c, "\r\n", 2);
    outf(c, ":relay.bench 366 %s %s :End of /NAMES list.\r\n", c->nick, name);
}

static void handle(Conn *c, char *line) {
    char *verb = strtok(line, " ");
    if (!verb) return;
    char *rest = strtok(NULL, "");
    char *arg = rest ? strtok(rest, " ") : NULL;
    char *tail = arg ? strtok(NULL, "") : NULL;
    if (strcmp(verb, "NICK") == 0 && arg) {
        snprintf(c->nick, sizeof c->nick, "%s", arg);
        if (c->has_user && !c->registered) welcome(c);
    } else if (strcmp(verb, "USER") == 0) {
        c->has_user = 1;
        if (c->nick[0] && !c->registered) welcome(c);
    } else if (strcmp(verb, "PING") == 0) {
        outf(c, ":relay.bench PONG relay.bench :%s\r\n", arg ? arg : "");
    } else if (!c->registered) {
        return;
    } else if (strcmp(verb, "JOIN") == 0 && arg) {
        join(c, arg);
    } else if (strcmp(verb, "PRIVMSG") == 0 && arg && tail && c->room && strcmp(arg, c->room->name) == 0) {
        char out_line[MAX_LINE + 64];
        int n = snprintf(out_line, sizeof out_line, ":%s!u@127.0.0.1 PRIVMSG %s %s\r\n", c->nick, arg, tail);
        to_room(c->room, c, out_line, (size_t)n < sizeof out_line ? (size_t)n : sizeof out_line - 1);
    } else if (strcmp(verb, "QUIT") == 0) {
        leave(c, "Quit");
        outf(c, "ERROR :Closing link\r\n");
        c->closing = 2;  /* flushed, then closed */
    }
}

/* Reads into one buffer shared by all connections; only an unfinished line stays with the connection. */
static void readable(Conn *c) {
    static char buf[MAX_LINE + READ_SIZE];
    for (;;) {
        memcpy(buf, c->partial, c->partial_len);
        ssize_t n = recv(c->fd, buf + c->partial_len, READ_SIZE, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) { close_conn(c); return; }
        if (n < 0) return;
        size_t len = c->partial_len + (size_t)n, start = 0;
        for (size_t i = 0; i < len; i++) {
            if (buf[i] != '\n') continue;
            size_t end = i > start && buf[i - 1] == '\r' ? i - 1 : i;
            buf[end] = 0;
            if (end - start > MAX_LINE) buf[start + MAX_LINE] = 0;
            handle(c, buf + start);
            start = i + 1;
            if (c->closing) return;
        }
        c->partial_len = len - start <= MAX_LINE ? len - start : 0;  /* a line too long: dropped */
        memcpy(c->partial, buf + start, c->partial_len);
        if ((size_t)n < READ_SIZE) return;  /* drained; epoll says if not */
    }
}

/* Sends what the socket takes; the rest waits for EPOLLOUT. Returns 0 when the connection closed. */
static int flush(Conn *c) {
    while (c->out_len > 0) {
        ssize_t n = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL);
        if (n < 0 && errno == EAGAIN) {
            struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.fd = c->fd};
            epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
            return 1;
        }
        if (n <= 0) { close_conn(c); return 0; }
        memmove(c->out, c->out + n, c->out_len - (size_t)n);
        c->out_len -= (size_t)n;
    }
    return 1;
}

int main(int argc, char **argv) {
    int port = argc > 1 ? atoi(argv[1]) : 16670;
    signal(SIGPIPE, SIG_IGN);
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(listener, 1024) < 0) {
        perror("relay: listen");
        return 1;
    }
    ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(ep, EPOLL_CTL_ADD, listener, &ev);
    static struct epoll_event events[256];
    static Conn *closed[SLOTS];
    for (;;) {
        int count = epoll_wait(ep, events, 256, -1);
        size_t closed_count = 0;
        for (int i = 0; i < count; i++) {
            int fd = events[i].data.fd;
            if (fd == listener) {
                int cfd;
                while ((cfd = accept4(listener, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (cfd >= SLOTS) { close(cfd); continue; }
                    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    Conn *c = calloc(1, sizeof(Conn));
                    c->fd = cfd;
                    conns[cfd] = c;
                    struct epoll_event cev = {.events = EPOLLIN, .data.fd = cfd};
                    epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &cev);
                }
                continue;
            }
            Conn *c = conns[fd];
            if (!c) continue;
            if (events[i].events & EPOLLOUT) {
                if (!flush(c)) { closed[closed_count++] = c; continue; }
                if (c->out_len == 0) {
                    struct epoll_event cev = {.events = EPOLLIN, .data.fd = fd};
                    epoll_ctl(ep, EPOLL_CTL_MOD, fd, &cev);
                }
            }
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                readable(c);
                if (c->closing == 1) closed[closed_count++] = c;
            }
        }
        /* Once per turn: every client with output gets one send. */
        for (size_t i = 0; i < dirty_count; i++) {
            Conn *c = dirty[i];
            c->dirty = 0;
            if (c->closing == 1) continue;
            if (!flush(c)) { closed[closed_count++] = c; continue; }
            if (c->closing == 2) { close_conn(c); closed[closed_count++] = c; }
        }
        dirty_count = 0;
        for (size_t i = 0; i < closed_count; i++) { free(closed[i]->out); free(closed[i]); }
    }
}
