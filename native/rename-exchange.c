/*
 * exchange(a, b): swaps the names of two files in one step (Linux renameat2 with RENAME_EXCHANGE),
 * on the libuv thread pool; the promise rejects with an Error whose `code` is the errno name.
 * Node's fs has no such call. Built by scripts/setup.sh; src/storage/rename-exchange.ts loads it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <node_api.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

typedef struct {
  char *first;
  char *second;
  int error;
  napi_deferred deferred;
  napi_async_work work;
} Exchange;

static void run(napi_env env, void *data) {
  (void)env;
  Exchange *exchange = data;
  long done = syscall(SYS_renameat2, AT_FDCWD, exchange->first, AT_FDCWD, exchange->second, RENAME_EXCHANGE);
  exchange->error = done == 0 ? 0 : errno;
}

static const char *errno_name(int error) {
  switch (error) {
    case ENOENT: return "ENOENT";
    case EINVAL: return "EINVAL";
    case ENOSYS: return "ENOSYS";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EXDEV: return "EXDEV";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case EBUSY: return "EBUSY";
    case EROFS: return "EROFS";
    case ENOTDIR: return "ENOTDIR";
    case EISDIR: return "EISDIR";
    default: return "EIO";
  }
}

static void settle(napi_env env, napi_status status, void *data) {
  Exchange *exchange = data;
  if (status == napi_ok && exchange->error == 0) {
    napi_value undefined;
    napi_get_undefined(env, &undefined);
    napi_resolve_deferred(env, exchange->deferred, undefined);
  } else {
    int error = status == napi_ok ? exchange->error : ECANCELED;
    napi_value code, message, reason;
    napi_create_string_utf8(env, errno_name(error), NAPI_AUTO_LENGTH, &code);
    napi_create_string_utf8(env, strerror(error), NAPI_AUTO_LENGTH, &message);
    napi_create_error(env, code, message, &reason);
    napi_reject_deferred(env, exchange->deferred, reason);
  }
  napi_delete_async_work(env, exchange->work);
  free(exchange->first);
  free(exchange->second);
  free(exchange);
}

/* A copy of a string argument, or NULL (with a pending TypeError) when it is not a string. */
static char *string_argument(napi_env env, napi_value value) {
  size_t length;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) {
    napi_throw_type_error(env, NULL, "exchange takes two paths");
    return NULL;
  }
  char *copy = malloc(length + 1);
  if (copy) napi_get_value_string_utf8(env, value, copy, length + 1, &length);
  return copy;
}

static napi_value exchange_files(napi_env env, napi_callback_info info) {
  size_t count = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &count, argv, NULL, NULL);
  if (count < 2) {
    napi_throw_type_error(env, NULL, "exchange takes two paths");
    return NULL;
  }
  Exchange *exchange = calloc(1, sizeof(Exchange));
  if (!exchange) return NULL;
  exchange->first = string_argument(env, argv[0]);
  exchange->second = exchange->first ? string_argument(env, argv[1]) : NULL;
  if (!exchange->second) {
    free(exchange->first);
    free(exchange);
    return NULL;
  }
  napi_value promise, name;
  napi_create_promise(env, &exchange->deferred, &promise);
  napi_create_string_utf8(env, "steward:exchange", NAPI_AUTO_LENGTH, &name);
  napi_create_async_work(env, NULL, name, run, settle, exchange, &exchange->work);
  napi_queue_async_work(env, exchange->work);
  return promise;
}

NAPI_MODULE_INIT() {
  napi_value function;
  napi_create_function(env, "exchange", NAPI_AUTO_LENGTH, exchange_files, NULL, &function);
  napi_set_named_property(env, exports, "exchange", function);
  return exports;
}
