/* mhd_shim: libmicrohttpd, loaded when the server starts (common/dynlib.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "common/dynlib.h"

/* some of these are marked deprecated in newer releases; the shim only forwards */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static struct dynlib mhd = DYNLIB_INIT("libmicrohttpd.so.12");

DYNLIB_SHIM(mhd, enum MHD_Result, MHD_add_response_header,
	    (struct MHD_Response * response, const char *header, const char *content),
	    (response, header, content))
DYNLIB_SHIM(mhd, struct MHD_Response *, MHD_create_response_from_buffer,
	    (size_t size, void *buffer, enum MHD_ResponseMemoryMode mode), (size, buffer, mode))
DYNLIB_SHIM(mhd, struct MHD_Response *, MHD_create_response_from_callback,
	    (uint64_t size, size_t block_size, MHD_ContentReaderCallback crc, void *crc_cls,
	     MHD_ContentReaderFreeCallback crfc),
	    (size, block_size, crc, crc_cls, crfc))
DYNLIB_SHIM_VOID(mhd, MHD_destroy_response, (struct MHD_Response * response), (response))
DYNLIB_SHIM(mhd, int, MHD_get_connection_values,
	    (struct MHD_Connection * connection, enum MHD_ValueKind kind,
	     MHD_KeyValueIterator iterator, void *iterator_cls),
	    (connection, kind, iterator, iterator_cls))
DYNLIB_SHIM(mhd, size_t, MHD_http_unescape, (char *val), (val))
DYNLIB_SHIM(mhd, const char *, MHD_lookup_connection_value,
	    (struct MHD_Connection * connection, enum MHD_ValueKind kind, const char *key),
	    (connection, kind, key))
DYNLIB_SHIM(mhd, enum MHD_Result, MHD_queue_response,
	    (struct MHD_Connection * connection, unsigned int status_code,
	     struct MHD_Response *response),
	    (connection, status_code, response))
DYNLIB_SHIM(mhd, MHD_socket, MHD_quiesce_daemon, (struct MHD_Daemon * daemon), (daemon))
DYNLIB_SHIM_VOID(mhd, MHD_resume_connection, (struct MHD_Connection * connection), (connection))
DYNLIB_SHIM_VOID(mhd, MHD_stop_daemon, (struct MHD_Daemon * daemon), (daemon))
DYNLIB_SHIM_VOID(mhd, MHD_suspend_connection, (struct MHD_Connection * connection), (connection))

/* the variadic one: its options go on as a va_list */
struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
				    void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	static typeof(&MHD_start_daemon_va) fn;
	typeof(&MHD_start_daemon_va) f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);
	if (!f) {
		f = (typeof(&MHD_start_daemon_va))dynlib_sym(&mhd, "MHD_start_daemon_va");
		__atomic_store_n(&fn, f, __ATOMIC_RELEASE);
	}
	va_list ap;
	va_start(ap, dh_cls);
	struct MHD_Daemon *d = f(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

/* variadic too, but none of the kinds asked for (fd, socket context, header
 * size, status) takes an argument after the kind */
const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *connection,
							enum MHD_ConnectionInfoType info_type, ...)
{
	static typeof(&MHD_get_connection_info) fn;
	typeof(&MHD_get_connection_info) f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);
	if (!f) {
		f = (typeof(&MHD_get_connection_info))dynlib_sym(&mhd, "MHD_get_connection_info");
		__atomic_store_n(&fn, f, __ATOMIC_RELEASE);
	}
	return f(connection, info_type);
}
