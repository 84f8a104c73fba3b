/* pq_shim: libpq, loaded when the database is first used (common/dynlib.h). */
#include <libpq-fe.h>

#include "common/dynlib.h"

static struct dynlib pq = DYNLIB_INIT("libpq.so.5");

DYNLIB_SHIM_VOID(pq, PQclear, (PGresult * res), (res))
DYNLIB_SHIM(pq, char *, PQcmdTuples, (PGresult * res), (res))
DYNLIB_SHIM(pq, PGconn *, PQconnectdb, (const char *conninfo), (conninfo))
DYNLIB_SHIM(pq, int, PQconsumeInput, (PGconn * conn), (conn))
DYNLIB_SHIM(pq, char *, PQerrorMessage, (const PGconn *conn), (conn))
DYNLIB_SHIM(pq, PGresult *, PQexec, (PGconn * conn, const char *query), (conn, query))
DYNLIB_SHIM(pq, PGresult *, PQexecParams,
	    (PGconn * conn, const char *command, int nParams, const Oid *paramTypes,
	     const char *const *paramValues, const int *paramLengths, const int *paramFormats,
	     int resultFormat),
	    (conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats,
	     resultFormat))
DYNLIB_SHIM(pq, PGresult *, PQprepare,
	    (PGconn * conn, const char *stmtName, const char *query, int nParams,
	     const Oid *paramTypes),
	    (conn, stmtName, query, nParams, paramTypes))
DYNLIB_SHIM(pq, PGresult *, PQexecPrepared,
	    (PGconn * conn, const char *stmtName, int nParams, const char *const *paramValues,
	     const int *paramLengths, const int *paramFormats, int resultFormat),
	    (conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat))
DYNLIB_SHIM_VOID(pq, PQfinish, (PGconn * conn), (conn))
DYNLIB_SHIM_VOID(pq, PQfreemem, (void *ptr), (ptr))
DYNLIB_SHIM(pq, int, PQgetlength, (const PGresult *res, int tup_num, int field_num),
	    (res, tup_num, field_num))
DYNLIB_SHIM(pq, int, PQgetisnull, (const PGresult *res, int tup_num, int field_num),
	    (res, tup_num, field_num))
DYNLIB_SHIM(pq, char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num),
	    (res, tup_num, field_num))
DYNLIB_SHIM(pq, int, PQnfields, (const PGresult *res), (res))
DYNLIB_SHIM(pq, PGnotify *, PQnotifies, (PGconn * conn), (conn))
DYNLIB_SHIM(pq, int, PQntuples, (const PGresult *res), (res))
DYNLIB_SHIM(pq, PGPing, PQping, (const char *conninfo), (conninfo))
DYNLIB_SHIM(pq, char *, PQresultErrorField, (const PGresult *res, int fieldcode), (res, fieldcode))
DYNLIB_SHIM(pq, char *, PQresultErrorMessage, (const PGresult *res), (res))
DYNLIB_SHIM(pq, ExecStatusType, PQresultStatus, (const PGresult *res), (res))
DYNLIB_SHIM(pq, PQnoticeProcessor, PQsetNoticeProcessor,
	    (PGconn * conn, PQnoticeProcessor proc, void *arg), (conn, proc, arg))
DYNLIB_SHIM(pq, int, PQsocket, (const PGconn *conn), (conn))
DYNLIB_SHIM(pq, ConnStatusType, PQstatus, (const PGconn *conn), (conn))
DYNLIB_SHIM(pq, PGTransactionStatusType, PQtransactionStatus, (const PGconn *conn), (conn))
DYNLIB_SHIM(pq, unsigned char *, PQunescapeBytea, (const unsigned char *strtext, size_t *retbuflen),
	    (strtext, retbuflen))
