/* voxcol_c.h: the C ABI of the voxcol client (issue 37), for engines and languages that load
 * native libraries (C# through P/Invoke, Python through ctypes, GDScript through GDExtension).
 *
 * libvoxcol_c.so wraps the C++ SDK (client/voxcol_client.h, client/query_batcher.h) behind opaque
 * handles. Conventions:
 *   - Every call that can fail returns a voxcol_code: 0 (VOXCOL_OK) or a gRPC status code (the
 *     server's, or the client's own: INVALID_ARGUMENT for a NULL or malformed argument,
 *     UNAVAILABLE when the server cannot be reached, DEADLINE_EXCEEDED after the timeout).
 *     voxcol_last_error() then tells why, naming the argument or the server's field.
 *   - Buffers belong to the caller: arrays of rays and hits are passed in with their length and
 *     the library writes into them; nothing the library returns needs freeing except a client.
 *   - A client may be used from several threads at once. Its raycast batches go out on one Query
 *     stream (the C++ QueryBatcher): one message per batch, packed arrays each way.
 *   - Structs passed in carry their size (options), so a later library reads an older caller's
 *     struct; fields are only ever added at the end.
 */
#ifndef VOXCOL_C_H_
#define VOXCOL_C_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define VOXCOL_C_API __declspec(dllexport)
#else
#define VOXCOL_C_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define VOXCOL_C_ABI_VERSION 1

/* gRPC status codes, as the server and the other clients report them. */
typedef enum voxcol_code {
  VOXCOL_OK = 0,
  VOXCOL_CANCELLED = 1,
  VOXCOL_UNKNOWN = 2,
  VOXCOL_INVALID_ARGUMENT = 3,
  VOXCOL_DEADLINE_EXCEEDED = 4,
  VOXCOL_NOT_FOUND = 5,
  VOXCOL_ALREADY_EXISTS = 6,
  VOXCOL_PERMISSION_DENIED = 7,
  VOXCOL_RESOURCE_EXHAUSTED = 8,
  VOXCOL_FAILED_PRECONDITION = 9,
  VOXCOL_ABORTED = 10,
  VOXCOL_OUT_OF_RANGE = 11,
  VOXCOL_UNIMPLEMENTED = 12,
  VOXCOL_INTERNAL = 13,
  VOXCOL_UNAVAILABLE = 14,
  VOXCOL_DATA_LOSS = 15,
  VOXCOL_UNAUTHENTICATED = 16
} voxcol_code;

typedef struct voxcol_client voxcol_client;

typedef struct voxcol_vec3 {
  float x, y, z;
} voxcol_vec3;

typedef struct voxcol_int3 {
  int32_t x, y, z;
} voxcol_int3;

/* How to reach the server. Fill with voxcol_options_init, then set what you need. */
typedef struct voxcol_options {
  size_t struct_size;      /* sizeof(voxcol_options); set by voxcol_options_init */
  const char* target;      /* "host:port" (required) */
  const char* world;       /* the world every request is about; NULL or "" = the default */
  const char* token;       /* sent as "authorization: Bearer <token>"; NULL = none */
  const char* ca_pem;      /* PEM of the CA that signed the server; turns TLS on */
  const char* server_name; /* name expected in the server's certificate; NULL = target's host */
  int32_t tls;             /* non-zero: TLS even without ca_pem (system roots) */
  uint32_t timeout_ms;     /* deadline of every call and batch; 0 = 10000 */
} voxcol_options;

/* A ray: origin in world units, any non-zero direction (normalized by the server), length. */
typedef struct voxcol_ray {
  voxcol_vec3 origin;
  voxcol_vec3 direction;
  float max_distance;
} voxcol_ray;

/* The nearest hit of one ray. */
typedef struct voxcol_ray_hit {
  int32_t code;           /* VOXCOL_OK, or why this ray alone failed (INVALID_ARGUMENT) */
  int32_t hit;            /* 1: the ray hit terrain (the fields below are set); 0: it did not */
  int32_t started_inside; /* 1: the origin is inside terrain (distance 0, no normal) */
  float distance;         /* world units from the origin along the normalized direction */
  voxcol_vec3 position;
  voxcol_vec3 normal; /* unit, toward empty space */
  uint32_t material;
  voxcol_int3 voxel;
} voxcol_ray_hit;

/* The library's ABI version (VOXCOL_C_ABI_VERSION of the header it was built with). */
VOXCOL_C_API int32_t voxcol_abi_version(void);

/* This thread's message for the last call that did not return VOXCOL_OK ("" if none). Valid
 * until this thread's next call into the library. */
VOXCOL_C_API const char* voxcol_last_error(void);

/* Sets every field to its default and struct_size to sizeof(voxcol_options). */
VOXCOL_C_API void voxcol_options_init(voxcol_options* options);

/* Makes a client and checks that the server answers (GetWorldInfo within the timeout), so a
 * wrong address, token or world fails here. *out is set only on VOXCOL_OK. */
VOXCOL_C_API voxcol_code voxcol_connect(const voxcol_options* options, voxcol_client** out);

/* Closes the client's stream and frees it. NULL is allowed. No call may use it afterwards. */
VOXCOL_C_API void voxcol_close(voxcol_client* client);

/* The world's current version and its bounds in world units (points outside are rejected).
 * Any output may be NULL. */
VOXCOL_C_API voxcol_code voxcol_world_info(voxcol_client* client, uint64_t* version,
                                           voxcol_vec3* bounds_min, voxcol_vec3* bounds_max);

/* One raycast (the unary Raycast call). `version` (may be NULL) receives the version read. */
VOXCOL_C_API voxcol_code voxcol_raycast(voxcol_client* client, const voxcol_ray* ray,
                                        voxcol_ray_hit* hit, uint64_t* version);

/* `count` raycasts as one batch on the client's Query stream, read at a version >= min_version
 * (0 = any; pass an edit's version to read your own write). hits[i] answers rays[i]; a bad ray
 * fails alone (its code; voxcol_last_error() then names the first bad ray), a bad batch fails
 * the call. At most 65536 rays per call. */
VOXCOL_C_API voxcol_code voxcol_raycasts(voxcol_client* client, const voxcol_ray* rays,
                                         size_t count, uint64_t min_version, voxcol_ray_hit* hits,
                                         uint64_t* version);

/* Fills (material > 0) or carves (material 0) a ball; returns once the edit is durable.
 * `version` (may be NULL) receives the version it produced. */
VOXCOL_C_API voxcol_code voxcol_fill_ball(voxcol_client* client, voxcol_vec3 center, float radius,
                                          uint32_t material, uint64_t* version);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* VOXCOL_C_H_ */
