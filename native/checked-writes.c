/*
 * writeChecked(fd, buffer, length, checked, position, crc): on the libuv thread pool, the CRC-32 of
 * the first `checked` bytes of `buffer` carried on from `crc`, then the first `length` bytes of it
 * written whole to `fd` at `position`. The promise resolves with the new CRC-32, or rejects with
 * an Error whose `code` is the errno name. An upload's bytes are summed and written off the event
 * loop this way, which a CRC-32 of every piece on it kept busy. Built by scripts/build-native.sh;
 * src/storage/checked-writes.ts loads it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <node_api.h>

typedef struct {
  int fd;
  unsigned char *data;
  size_t length;
  size_t checked;
  int64_t position;
  uint32_t crc;
  int error;
  napi_ref buffer;
  napi_deferred deferred;
  napi_async_work work;
} Write;

/* Sums in pieces: zlib's crc32 takes a length of 32 bits. */
static uint32_t checksum(uint32_t crc, const unsigned char *data, size_t length) {
  const size_t piece = 1u << 30;
  for (size_t at = 0; at < length; at += piece) {
    size_t size = length - at < piece ? length - at : piece;
    crc = (uint32_t)crc32(crc, data + at, (uInt)size);
  }
  return crc;
}

static void run(napi_env env, void *data) {
  (void)env;
  Write *write = data;
  write->crc = checksum(write->crc, write->data, write->checked);
  size_t done = 0;
  while (done < write->length) {
    ssize_t wrote = pwrite(write->fd, write->data + done, write->length - done, write->position + (int64_t)done);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      write->error = errno;
      return;
    }
    if (wrote == 0) {
      write->error = EIO;
      return;
    }
    done += (size_t)wrote;
  }
}

static const char *errno_name(int error) {
  switch (error) {
    case ENOSPC: return "ENOSPC";
    case EDQUOT: return "EDQUOT";
    case EBADF: return "EBADF";
    case EINVAL: return "EINVAL";
    case EFBIG: return "EFBIG";
    case EROFS: return "EROFS";
    default: return "EIO";
  }
}

static void settle(napi_env env, napi_status status, void *data) {
  Write *write = data;
  if (status == napi_ok && write->error == 0) {
    napi_value crc;
    napi_create_uint32(env, write->crc, &crc);
    napi_resolve_deferred(env, write->deferred, crc);
  } else {
    int error = status == napi_ok ? write->error : ECANCELED;
    napi_value code, message, reason;
    napi_create_string_utf8(env, errno_name(error), NAPI_AUTO_LENGTH, &code);
    napi_create_string_utf8(env, strerror(error), NAPI_AUTO_LENGTH, &message);
    napi_create_error(env, code, message, &reason);
    napi_reject_deferred(env, write->deferred, reason);
  }
  napi_delete_reference(env, write->buffer);
  napi_delete_async_work(env, write->work);
  free(write);
}

/* The arguments checked and copied into `write`; false with a pending TypeError when they do not fit. */
static bool take_arguments(napi_env env, napi_callback_info info, Write *write) {
  size_t count = 6;
  napi_value argv[6];
  napi_get_cb_info(env, info, &count, argv, NULL, NULL);
  bool typed = false;
  if (count == 6) napi_is_typedarray(env, argv[1], &typed);
  int32_t fd = -1;
  int64_t length = -1, checked = -1, position = -1;
  uint32_t crc = 0;
  size_t size = 0;
  void *bytes = NULL;
  napi_typedarray_type type;
  napi_value arraybuffer;
  size_t offset;
  bool fits = typed && napi_get_typedarray_info(env, argv[1], &type, &size, &bytes, &arraybuffer, &offset) == napi_ok &&
              type == napi_uint8_array && napi_get_value_int32(env, argv[0], &fd) == napi_ok &&
              napi_get_value_int64(env, argv[2], &length) == napi_ok &&
              napi_get_value_int64(env, argv[3], &checked) == napi_ok &&
              napi_get_value_int64(env, argv[4], &position) == napi_ok &&
              napi_get_value_uint32(env, argv[5], &crc) == napi_ok && fd >= 0 && length >= 0 && checked >= 0 &&
              position >= 0 && (size_t)length <= size && (size_t)checked <= size;
  if (!fits) {
    napi_throw_type_error(env, NULL, "writeChecked takes a file descriptor, a Uint8Array, two lengths within it, a position and a CRC-32");
    return false;
  }
  write->fd = fd;
  write->data = bytes;
  write->length = (size_t)length;
  write->checked = (size_t)checked;
  write->position = position;
  write->crc = crc;
  return napi_create_reference(env, argv[1], 1, &write->buffer) == napi_ok;
}

static napi_value write_checked(napi_env env, napi_callback_info info) {
  Write *write = calloc(1, sizeof(Write));
  if (!write) return NULL;
  if (!take_arguments(env, info, write)) {
    free(write);
    return NULL;
  }
  napi_value promise, name;
  napi_create_promise(env, &write->deferred, &promise);
  napi_create_string_utf8(env, "steward:writeChecked", NAPI_AUTO_LENGTH, &name);
  napi_create_async_work(env, NULL, name, run, settle, write, &write->work);
  napi_queue_async_work(env, write->work);
  return promise;
}

NAPI_MODULE_INIT() {
  napi_value function;
  napi_create_function(env, "writeChecked", NAPI_AUTO_LENGTH, write_checked, NULL, &function);
  napi_set_named_property(env, exports, "writeChecked", function);
  return exports;
}
