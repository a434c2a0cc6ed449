#ifndef TODAYSIM_CMICROHTTPD_SHIM_H
#define TODAYSIM_CMICROHTTPD_SHIM_H
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <netinet/tcp.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#include <microhttpd.h>

/// MHD_start_daemon is variadic, which Swift cannot call: this passes the options todaysim
/// uses. `listen_fd` is a socket the caller bound and listens on.
static inline struct MHD_Daemon *todaysim_start_daemon(
    unsigned int flags, MHD_AccessHandlerCallback handler, void *handler_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    MHD_NotifyConnectionCallback connections, void *connections_cls, int listen_fd,
    unsigned int thread_pool_size, unsigned int connection_timeout_s, unsigned int connection_limit)
{
    return MHD_start_daemon(
        flags, 0, NULL, NULL, handler, handler_cls,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_NOTIFY_CONNECTION, connections, connections_cls,
        MHD_OPTION_LISTEN_SOCKET, listen_fd,
        MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_s,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_END);
}

/// The connection's socket, or -1.
static inline int todaysim_connection_fd(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}
/// Whether a connection notice says the connection started (rather than closed).
static inline int todaysim_connection_started(enum MHD_ConnectionNotificationCode notice)
{
    return notice == MHD_CONNECTION_NOTIFY_STARTED;
}
/// A request header by name, or NULL.
static inline const char *todaysim_request_header(struct MHD_Connection *connection, const char *name)
{
    return MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
}

/// A query-string argument by name (decoded), or NULL; `*size_out` receives its decoded length,
/// which counts a `%00` and what follows it (the value is not cut at its first NUL).
static inline const char *todaysim_query_argument(struct MHD_Connection *connection, const char *name, size_t *size_out)
{
    const char *value = NULL;
    if (MHD_lookup_connection_value_n(connection, MHD_GET_ARGUMENT_KIND, name, strlen(name), &value, size_out) != MHD_YES)
        return NULL;
    return value;
}

/// A response whose body libmicrohttpd copies.
static inline struct MHD_Response *todaysim_response_copying(size_t size, const void *body)
{
    return MHD_create_response_from_buffer(size, (void *)body, MHD_RESPMEM_MUST_COPY);
}

/// A response streamed from `reader` with no announced length (Server-Sent Events).
static inline struct MHD_Response *todaysim_response_streaming(MHD_ContentReaderCallback reader, void *cls,
                                                              MHD_ContentReaderFreeCallback freed)
{
    return MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, reader, cls, freed);
}

static inline ssize_t todaysim_read_nothing(void *cls, uint64_t position, char *buffer, size_t max)
{
    (void)cls; (void)position; (void)buffer; (void)max;
    return MHD_CONTENT_READER_END_OF_STREAM;
}

/// The answer to `HEAD` of a stream: headers with no length and no chunked framing, then the
/// connection closes. (A streamed response under HEAD would make libmicrohttpd 0.9.75 send the
/// chunked body's last chunk after the headers, which a kept-alive client would read as the
/// start of its next answer.)
static inline struct MHD_Response *todaysim_response_stream_headers(void)
{
    struct MHD_Response *response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024, todaysim_read_nothing, NULL, NULL);
    if (response != NULL && MHD_set_response_options(response, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT, MHD_RO_END) != MHD_YES) {
        MHD_destroy_response(response);
        return NULL;
    }
    return response;
}

/// Hands the free pages of every malloc arena back to the system (glibc's `malloc_trim`,
/// which Swift's Glibc module does not show).
static inline void todaysim_trim_heap(void)
{
    malloc_trim(0);
}

/// Binds and listens on host:port (port 0 picks a free one). Returns the socket, or -1 with
/// `*error_out` set to errno (or to -2 when the host does not resolve). `*port_out` receives the
/// bound port and `*ipv6_out` whether the socket is IPv6.
static inline int todaysim_listen(const char *host, int port, int *port_out, int *ipv6_out, int *error_out)
{
    struct addrinfo hints;
    struct addrinfo *found = NULL;
    char service[16];
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(service, sizeof service, "%d", port);
    if (getaddrinfo(host, service, &hints, &found) != 0 || found == NULL) {
        *error_out = -2;
        return -1;
    }
    int fd = socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
    if (fd < 0) {
        *error_out = errno;
        freeaddrinfo(found);
        return -1;
    }
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (bind(fd, found->ai_addr, found->ai_addrlen) != 0 || listen(fd, 1024) != 0) {
        *error_out = errno;
        close(fd);
        freeaddrinfo(found);
        return -1;
    }
    *ipv6_out = found->ai_family == AF_INET6;
    freeaddrinfo(found);
    struct sockaddr_storage bound;
    socklen_t length = sizeof bound;
    getsockname(fd, (struct sockaddr *)&bound, &length);
    if (bound.ss_family == AF_INET6) {
        *port_out = ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
    } else {
        *port_out = ntohs(((struct sockaddr_in *)&bound)->sin_port);
    }
    return fd;
}
/// The calling thread's id (`gettid`, which Swift does not import), for its own nice value.
static inline int todaysim_thread_id(void)
{
    return (int)syscall(SYS_gettid);
}
/// Makes a listening socket drop every packet it is sent (a classic BPF filter that keeps
/// nothing), so its accept queue stops growing: a SYN gets no answer and is not queued. 0 on
/// success, else errno. Undone by `todaysim_listener_take_all`.
static inline int todaysim_listener_drop_all(int fd)
{
    struct sock_filter keep_nothing[] = { BPF_STMT(BPF_RET | BPF_K, 0) };
    struct sock_fprog program = { .len = 1, .filter = keep_nothing };
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof program) == 0 ? 0 : errno;
}
static inline void todaysim_listener_take_all(int fd)
{
    int unused = 0;
    (void)setsockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, &unused, sizeof unused);
}
/// Puts the read end of a new pipe in the place of descriptor `fd` (closing what `fd` was),
/// keeping both ends close-on-exec. 0 with `*write_end_out` set, else errno.
static inline int todaysim_replace_with_pipe(int fd, int *write_end_out)
{
    int ends[2];
    if (syscall(SYS_pipe2, ends, O_CLOEXEC) != 0) return errno;
    if (syscall(SYS_dup3, ends[0], fd, O_CLOEXEC) != fd) {
        int error = errno;
        close(ends[0]);
        close(ends[1]);
        return error;
    }
    close(ends[0]);
    *write_end_out = ends[1];
    return 0;
}
/// How many connections wait in a listening socket's accept queue (TCP_INFO's `tcpi_unacked`
/// for a listener), or -1.
static inline int todaysim_listener_queued(int fd)
{
    struct tcp_info info;
    socklen_t length = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0 || info.tcpi_state != TCP_LISTEN) return -1;
    return (int)info.tcpi_unacked;
}
/// The connections libmicrohttpd holds, summed over its workers, or -1.
static inline long todaysim_daemon_connections(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info == NULL ? -1 : (long)info->num_connections;
}
#endif
