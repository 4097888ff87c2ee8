/*
 * duplicate(fd): a new descriptor of what `fd` refers to (fcntl F_DUPFD_CLOEXEC), or an Error
 * whose `code` is the errno name. An upload's socket is read off the event loop this way: a worker
 * thread reads the request's body from a descriptor of its own, which it may close when done
 * without closing the connection the answer goes back on (docs/publishing.md). Node's API has no
 * such call. Built by scripts/build-native.sh; src/storage/socket-body.ts loads it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include <node_api.h>

static const char *errno_name(int error) {
  switch (error) {
    case EBADF: return "EBADF";
    case EMFILE: return "EMFILE";
    case EINVAL: return "EINVAL";
    default: return "EIO";
  }
}

static napi_value duplicate(napi_env env, napi_callback_info info) {
  size_t count = 1;
  napi_value argv[1];
  int32_t fd = -1;
  napi_get_cb_info(env, info, &count, argv, NULL, NULL);
  if (count != 1 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) {
    napi_throw_type_error(env, NULL, "duplicate takes a file descriptor");
    return NULL;
  }
  int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) {
    napi_throw_error(env, errno_name(errno), strerror(errno));
    return NULL;
  }
  napi_value result;
  napi_create_int32(env, copy, &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value function;
  napi_create_function(env, "duplicate", NAPI_AUTO_LENGTH, duplicate, NULL, &function);
  napi_set_named_property(env, exports, "duplicate", function);
  return exports;
}
